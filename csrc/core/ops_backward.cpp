// Gradients of softmax, log_softmax and the activations: argument checks (devices, then dtypes,
// then shapes) in front of their rows' kernels (csrc/cpu/softmax_backward.cpp, act_backward.cpp;
// csrc/metal/ops_softmax_backward.cpp, shaders/binary.metal).
#include <string>

#include "core/errors.h"
#include "core/ops.h"

namespace bm {

namespace {

void check_floating(const char* op, const char* name, const Tensor& t) {
  if (!is_floating(t.dtype))
    throw UnsupportedError(std::string("[") + op + "] " + name + " must be a floating point tensor, got " +
                           dtype_name(t.dtype));
}

// Both tensors floating, on one device; returns their promoted dtype after checking the row takes it.
DType check_pair(OpId op, const char* first, const TensorPtr& a, const char* second, const TensorPtr& b) {
  const char* name = op_row(op).name;
  check_same_device(name, {{first, a.get()}, {second, b.get()}});
  check_floating(name, first, *a);
  check_floating(name, second, *b);
  const DType dt = promote_types(a->dtype, b->dtype);
  check_dtype_supported(op, dt, a->device());
  return dt;
}

TensorPtr softmax_like_backward(OpId op, const TensorPtr& grad_out, const TensorPtr& out, int64_t dim) {
  const DType dt = check_pair(op, "grad_output", grad_out, "output", out);
  if (grad_out->shape != out->shape)
    throw ValueError(std::string("[") + op_row(op).name + "] grad_output has shape " + shape_str(grad_out->shape) +
                     " but output has shape " + shape_str(out->shape));
  OpArgs a;
  a.dim = dim;  // the SameShape rule normalises it (and raises IndexError when out of range)
  return run_op(op, {cast(grad_out, dt), cast(out, dt)}, a);
}

TensorPtr act_backward(OpId op, const TensorPtr& grad_out, const TensorPtr& x) {
  const DType dt = check_pair(op, "grad_output", grad_out, "input", x);
  return run_op(op, {cast(grad_out, dt), cast(x, dt)});  // shapes broadcast in the dispatcher
}

}  // namespace

TensorPtr softmax_backward(const TensorPtr& grad_out, const TensorPtr& out, int64_t dim) {
  return softmax_like_backward(OpId::softmax_backward, grad_out, out, dim);
}

TensorPtr log_softmax_backward(const TensorPtr& grad_out, const TensorPtr& out, int64_t dim) {
  return softmax_like_backward(OpId::log_softmax_backward, grad_out, out, dim);
}

TensorPtr gelu_backward(const TensorPtr& grad_out, const TensorPtr& x) {
  return act_backward(OpId::gelu_backward, grad_out, x);
}

TensorPtr gelu_tanh_backward(const TensorPtr& grad_out, const TensorPtr& x) {
  return act_backward(OpId::gelu_tanh_backward, grad_out, x);
}

TensorPtr relu_backward(const TensorPtr& grad_out, const TensorPtr& out) {
  return act_backward(OpId::relu_backward, grad_out, out);
}

TensorPtr silu_backward(const TensorPtr& grad_out, const TensorPtr& x) {
  return act_backward(OpId::silu_backward, grad_out, x);
}

}  // namespace bm
