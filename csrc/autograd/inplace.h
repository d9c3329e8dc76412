// In-place ops (add_, mul_, copy_, fill_, clamp_, t[idx] = v, ...) with torch's autograd semantics:
// - an in-place write into a leaf that requires grad (or a view of one) is an error outside no_grad;
// - every write bumps the storage's version, so a backward that saved the old values refuses them;
// - when a graph is needed, the new value is computed out of place (recorded) and copied in, and
//   the tensor's history is rewritten: a base tensor takes the new value's node; a view's base gets
//   a CopySlices node (the region's gradient flows into the new value, the rest to the old base),
//   and the view itself becomes a view of the new base.
// Without a graph the kernels write in place directly.
#pragma once
#include <optional>

#include "core/dispatch.h"

namespace bm {

// self = self op other for add, sub, mul, div (others: any binary registry op whose result fits self).
TensorPtr inplace_binary(OpId op, const TensorPtr& self, const Operand& other);
// self = op(self) for a one-input elementwise registry op (relu_, sigmoid_, exp_, ...): written in
// place by the op's kernel when no graph is recorded.
TensorPtr inplace_unary(OpId op, const TensorPtr& self);
TensorPtr inplace_clamp(const TensorPtr& self, std::optional<Scalar> min, std::optional<Scalar> max);
TensorPtr inplace_fill(const TensorPtr& self, Scalar value);
// self = src (broadcast to self's shape, cast to self's dtype, moved from any device).
TensorPtr inplace_copy(const TensorPtr& self, const TensorPtr& src);
// t[idx] = value (csrc/core/ops_index.h's index_put_) with autograd: the indexed positions take the
// value's gradient, the rest t's old history's.
struct TensorIndex;
void index_put_autograd(const TensorPtr& t, const std::vector<TensorIndex>& idx, const Operand& value);
// The general form: `new_value` (self's shape, recorded out of place) becomes self's contents.
// `op` names the operation in errors; call check_inplace before computing new_value.
TensorPtr commit_inplace(const char* op, const TensorPtr& self, TensorPtr new_value);
// Errors for an in-place write into a leaf that requires grad, or a view of one (grad mode only).
void check_inplace(const char* op, const TensorPtr& self);
// Whether an in-place write into self with these sources must be recorded.
bool inplace_needs_graph(const TensorPtr& self, const std::vector<Operand>& sources);

}  // namespace bm

