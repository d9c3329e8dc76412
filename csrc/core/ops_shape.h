// Shape functions and gather / scatter with torch's semantics, as compositions of registry rows
// (views, index_select, index_add, index_copy, where, arange): no kernels of their own, so they
// run on every backend with the strided, deterministic kernels of those rows, and their gradients
// come from those rows' rules (scatter records its own, a composition too).
//
// gather / scatter / scatter_add flatten the tensors they index (contiguous copies when they are
// not contiguous) and turn `index` into linear positions on the host, after checking every value
// (IndexError naming the op, before anything is written). Duplicated scatter targets: the last
// in the index's row-major order wins (as torch's CPU); scatter_add adds duplicates in that order
// (index_add's fixed order: the same bits on every backend, no float atomics).
#pragma once
#include <optional>
#include <string>

#include "core/ops.h"

namespace bm {

// torch.diagonal: a view; the diagonal becomes the last dim.
TensorPtr diagonal(const TensorPtr& t, int64_t offset, int64_t dim1, int64_t dim2);
// torch.flip / torch.roll: new tensors (index_select along each dim with a host-made index).
TensorPtr flip(const TensorPtr& t, const Dims& dims);
TensorPtr roll(const TensorPtr& t, const Dims& shifts, const Dims& dims);
// torch.tril / torch.triu: where(mask, t, 0), the mask from two aranges (exact, NaN kept).
TensorPtr tril_triu(const TensorPtr& t, int64_t diagonal, bool upper);
TensorPtr gather(const TensorPtr& x, int64_t dim, const TensorPtr& index);
// reduce: "" (overwrite) or "add".
TensorPtr scatter(const TensorPtr& self, int64_t dim, const TensorPtr& index, const Operand& src,
                  const std::string& reduce);
TensorPtr scatter_add(const TensorPtr& self, int64_t dim, const TensorPtr& index, const TensorPtr& src);
// torch.repeat_interleave's index: position i repeated repeats[i] times (int64, on repeats' device;
// repeats: 0-d or 1-D integer, non-negative; a single value is used `size` times).
TensorPtr repeat_interleave_index(const TensorPtr& repeats, std::optional<int64_t> size, const char* op);

}  // namespace bm
