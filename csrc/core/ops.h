// The public C++ API. Argument checks and conveniences live here; arithmetic lives in kernels.
#pragma once
#include <optional>
#include <vector>

#include "core/dispatch.h"

namespace bm {

using Dims = std::vector<int64_t>;

// ---- factories ----
TensorPtr full(const Shape& shape, Scalar value, DType dtype, Device* device);
// Raises RuntimeError "[op] value ... cannot be converted to <dtype> without overflow" (torch's rule).
void check_fill_value(const char* op, Scalar value, DType dtype);
TensorPtr arange(Scalar start, Scalar end, Scalar step, std::optional<DType> dtype, Device* device);
// Copies host memory laid out as (shape, byte strides) into a new contiguous tensor.
TensorPtr from_host(const void* data, const Shape& shape, const Shape& byte_strides, DType dtype, Device* device);
void fill_into(const TensorPtr& out, Scalar value);
TensorPtr scalar_tensor(Scalar value, DType dtype, Device* device);  // 0-d

// ---- copies, casts, devices ----
TensorPtr cast(const TensorPtr& t, DType dtype);
TensorPtr contiguous(const TensorPtr& t);
TensorPtr clone(const TensorPtr& t);
void copy_into(const TensorPtr& dst, const TensorPtr& src);  // dst may be a strided view
TensorPtr to_device(const TensorPtr& t, Device* device);
void synchronize(Device* device);  // nullptr: every device
// Waits for the work that writes t, so t's host-visible memory can be read.
void wait_readable(const Tensor& t);

// ---- views (never copy) ----
TensorPtr view(const TensorPtr& t, const Dims& shape);
TensorPtr reshape(const TensorPtr& t, const Dims& shape);  // view when possible, else copy
TensorPtr transpose(const TensorPtr& t, int64_t d0, int64_t d1);
TensorPtr permute(const TensorPtr& t, const Dims& dims);
TensorPtr unsqueeze(const TensorPtr& t, int64_t dim);
TensorPtr squeeze(const TensorPtr& t, std::optional<Dims> dims);
TensorPtr expand(const TensorPtr& t, const Dims& shape);
TensorPtr flatten(const TensorPtr& t, int64_t start_dim, int64_t end_dim);
TensorPtr select(const TensorPtr& t, int64_t dim, int64_t index);
TensorPtr slice(const TensorPtr& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> stop,
                int64_t step);
TensorPtr cat(const std::vector<TensorPtr>& ts, int64_t dim);
TensorPtr stack(const std::vector<TensorPtr>& ts, int64_t dim);

// ---- compute ----
TensorPtr unary(OpId op, const TensorPtr& t);
TensorPtr binary(OpId op, const Operand& a, const Operand& b);
TensorPtr clamp(const TensorPtr& t, std::optional<Scalar> min, std::optional<Scalar> max);
// clamp's arguments for its kernel (at least one bound; ValueError naming `op` otherwise) and its
// result dtype: t's promoted with the bounds, as torch (clamp(int tensor, min=0.5) is float32).
OpArgs clamp_args(const char* op, const TensorPtr& t, std::optional<Scalar> min, std::optional<Scalar> max,
                  DType* result);
TensorPtr where(const Operand& cond, const Operand& a, const Operand& b);
// dims empty = every dim.
TensorPtr reduce(OpId op, const TensorPtr& t, const Dims& dims, bool keepdim, double correction = 1);
// argmax/argmin: dim nullopt = over the flattened tensor.
TensorPtr arg_reduce(OpId op, const TensorPtr& t, std::optional<int64_t> dim, bool keepdim);
TensorPtr softmax(OpId op, const TensorPtr& t, int64_t dim);
TensorPtr matmul(const TensorPtr& a, const TensorPtr& b);

// ---- gradients with their own kernels (ops_backward.cpp), called by autograd's rules ----
// From the forward's output y along dim: softmax: y * (grad - sum(grad * y, dim, keepdim));
// log_softmax: grad - exp(y) * sum(grad, dim, keepdim). grad and y have one shape, any strides.
TensorPtr softmax_backward(const TensorPtr& grad_out, const TensorPtr& out, int64_t dim);
TensorPtr log_softmax_backward(const TensorPtr& grad_out, const TensorPtr& out, int64_t dim);
// grad * act'(x) with torch's derivatives, grad and x broadcasting like a binary op.
TensorPtr gelu_backward(const TensorPtr& grad_out, const TensorPtr& x);
TensorPtr gelu_tanh_backward(const TensorPtr& grad_out, const TensorPtr& x);
TensorPtr silu_backward(const TensorPtr& grad_out, const TensorPtr& x);
// grad where relu's output `out` > 0 (or NaN), else 0: torch's threshold_backward, one pass.
TensorPtr relu_backward(const TensorPtr& grad_out, const TensorPtr& out);

}  // namespace bm
