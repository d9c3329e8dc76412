// The one dispatcher: every registry op goes through run_op, which checks device, then dtype,
// then shape — before any kernel or empty-tensor shortcut — and then calls the backend's kernel.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "core/op_registry.h"
#include "core/tensor.h"

namespace bm {

// An op input: a tensor, or a Python number (which promotes like torch's wrapped numbers and is
// materialised on the op's device in the computed dtype).
struct Operand {
  TensorPtr t;
  Scalar s;
  Operand(TensorPtr tensor) : t(std::move(tensor)) {}
  Operand(Scalar scalar) : s(scalar) {}
  bool is_scalar() const { return !t; }
};

// Input names used in messages: "input", "other"; where: "condition", "input", "other".
const char* input_name(OpId op, int i);

// DeviceMismatchError naming the op and both devices when named tensors live on different devices.
void check_same_device(const char* op, const std::vector<std::pair<const char*, const Tensor*>>& named);

// torch.result_type over tensors and numbers: dimensioned tensors > 0-d tensors > numbers.
DType result_type(const std::vector<Operand>& xs);

// UnsupportedError when the op does not take `compute` or `dev` has no kernel for it.
void check_dtype_supported(OpId op, DType compute, Device* dev);

TensorPtr run_op(OpId op, std::vector<Operand> inputs, const OpArgs& args = OpArgs{});
// Runs an op writing into `out` (which may be a strided view, e.g. a slice of cat's output).
void run_op_into(OpId op, std::vector<Operand> inputs, const OpArgs& args, const TensorPtr& out);

}  // namespace bm
