// Pooling ops and their gradients: argument checks and output shapes in torch's order and with
// torch's formulas, then the kernels (csrc/cpu/pool.cpp, csrc/cpu/pool_backward.cpp,
// csrc/metal/ops_pool.cpp) through the dispatcher. The kernels see
// a 4-D input and a 4-D output of the final shape; (C, H, W) inputs are viewed as (1, C, H, W).
#include "core/ops_nn_pool.h"
#include "autograd/record.h"
#include "autograd/rules_nn.h"
#include "core/memory.h"

#include <array>
#include <string>

#include "core/errors.h"

namespace bm {

namespace {

using Pair = std::array<int64_t, 2>;

// Values beyond this make the window arithmetic overflow long before they could make sense.
constexpr int64_t kMaxWindowArg = (int64_t(1) << 31) - 1;

std::string pair_str(const Pair& p) { return "(" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ")"; }

// One value for both dims or two (h, w); `fallback` when empty and a fallback is given.
Pair pair_arg(const char* op, const char* name, const Dims& v, const Pair* fallback = nullptr) {
  if (v.empty() && fallback) return *fallback;
  if (v.size() != 1 && v.size() != 2)
    throw ValueError(std::string("[") + op + "] " + name + " must be a single int or a tuple of two ints, got " +
                     std::to_string(v.size()) + " values");
  Pair p = v.size() == 1 ? Pair{v[0], v[0]} : Pair{v[0], v[1]};
  for (int64_t x : p)
    if (x > kMaxWindowArg)
      throw ValueError(std::string("[") + op + "] " + name + " " + pair_str(p) + " is too large (at most 2**31 - 1)");
  return p;
}

// The device is checked first even for one input, so every op keeps the same order.
void check_device_and_dtype(OpId op, const TensorPtr& input) {
  check_same_device(op_row(op).name, {{"input", input.get()}});
  check_dtype_supported(op, input->dtype, input->device());
}

// (N, C, H, W) or (C, H, W); `nonzero_from`: the first dim that must be non-empty, counted from
// the end (3: C, H and W; 2: H and W only, as torch's adaptive pooling allows C == 0).
void check_input_shape(const char* op, const Shape& x, int nonzero_from) {
  const size_t nd = x.size();
  bool ok = nd == 3 || nd == 4;
  for (int k = 1; ok && k <= nonzero_from; ++k) ok = x[nd - k] != 0;
  for (size_t d = 0; ok && d < nd; ++d) ok = x[d] >= 0;
  if (!ok) {
    const char* which = nonzero_from == 3 ? "C, H and W" : "H and W";
    throw ValueError(std::string("[") + op + "] expected a 3-D (C, H, W) or 4-D (N, C, H, W) input with non-zero " +
                     which + ", got shape " + shape_str(x));
  }
}

struct Window {
  Pair kernel, stride, padding, dilation;
};

Window check_window(const char* op, const Dims& kernel_size, const Dims& stride, const Dims& padding,
                    const Dims& dilation) {
  Window w;
  w.kernel = pair_arg(op, "kernel_size", kernel_size);
  w.stride = pair_arg(op, "stride", stride, &w.kernel);
  w.padding = pair_arg(op, "padding", padding);
  w.dilation = pair_arg(op, "dilation", dilation);
  auto positive = [&](const char* name, const Pair& p) {
    if (p[0] <= 0 || p[1] <= 0)
      throw ValueError(std::string("[") + op + "] " + name + " must be greater than zero, got " + pair_str(p));
  };
  positive("kernel_size", w.kernel);
  positive("stride", w.stride);
  positive("dilation", w.dilation);
  if (w.padding[0] < 0 || w.padding[1] < 0)
    throw ValueError(std::string("[") + op + "] padding must be non-negative, got " + pair_str(w.padding));
  // torch compares with half the kernel size itself, not the dilated extent.
  if (w.padding[0] > w.kernel[0] / 2 || w.padding[1] > w.kernel[1] / 2)
    throw ValueError(std::string("[") + op + "] padding should be at most half of kernel_size, got padding " +
                     pair_str(w.padding) + " and kernel_size " + pair_str(w.kernel));
  return w;
}

// The output (N, C, OH, OW) for a 4-D view of the input; ValueError when a dim comes out < 1.
Shape window_output(const char* op, const Shape& x4, const Shape& input, const Window& w, bool ceil_mode) {
  Shape out = x4;
  for (int d = 0; d < 2; ++d)
    out[2 + d] = pool_output_size(x4[2 + d], w.kernel[d], w.stride[d], w.padding[d], w.dilation[d], ceil_mode);
  if (out[2] < 1 || out[3] < 1)
    throw ValueError(std::string("[") + op + "] output size is too small: input " + shape_str(input) +
                     " gives (H, W) = (" + std::to_string(out[2]) + ", " + std::to_string(out[3]) +
                     ") with kernel_size " + pair_str(w.kernel) + ", stride " + pair_str(w.stride) + ", padding " +
                     pair_str(w.padding) + ", dilation " + pair_str(w.dilation));
  return out;
}

TensorPtr as_4d(const TensorPtr& x) { return x->ndim() == 3 ? unsqueeze(x, 0) : x; }

// (C, H, W) shapes as (1, C, H, W).
Shape as_4d(const Shape& s) {
  Shape r = s;
  if (r.size() == 3) r.insert(r.begin(), 1);
  return r;
}

// A fresh 4-D result and the view of it with `rank` dims (3: the leading 1 dropped).
std::pair<TensorPtr, TensorPtr> fresh(const Shape& shape4, size_t rank, DType dtype, Device* dev) {
  TensorPtr out = empty_tensor(shape4, dtype, dev);
  if (rank == 4) return {out, out};
  Shape s3(shape4.begin() + 1, shape4.end());
  return {out, make_view(out, s3, contiguous_strides(s3), out->offset)};
}

// Runs the op into a fresh (N, C, OH, OW) output and gives it the input's rank back.
TensorPtr run_pool(OpId op, const TensorPtr& input, const TensorPtr& x4, const Shape& out_shape, const OpArgs& a,
                   DType out_dtype) {
  auto [out, result] = fresh(out_shape, input->shape.size(), out_dtype, input->device());
  run_op_into(op, {x4}, a, out);
  return result;
}

void check_divisor(const char* op, std::optional<int64_t> divisor_override) {
  if (divisor_override && *divisor_override == 0)
    throw ValueError(std::string("[") + op + "] divisor_override must not be zero");
  if (divisor_override && (*divisor_override > kMaxWindowArg || *divisor_override < -kMaxWindowArg))
    throw ValueError(std::string("[") + op + "] divisor_override " + std::to_string(*divisor_override) +
                     " is too large");
}

// The window fields every pooling kernel reads.
OpArgs window_args(const Window& w) {
  OpArgs a;
  a.pool_kernel = w.kernel;
  a.pool_stride = w.stride;
  a.pool_padding = w.padding;
  a.pool_dilation = w.dilation;
  return a;
}

// max_pool2d's checks (under `id` and `op`) and its values, which max_pool2d_with_indices shares;
// the 4-D input, output shape and window come back for the indices launch.
struct MaxPool {
  TensorPtr x4;
  Shape out;
  OpArgs args;
  TensorPtr values;
};

MaxPool max_pool_values(OpId id, const char* op, const TensorPtr& input, const Dims& kernel_size, const Dims& stride,
                        const Dims& padding, const Dims& dilation, bool ceil_mode) {
  check_device_and_dtype(id, input);
  Window w = check_window(op, kernel_size, stride, padding, dilation);
  check_input_shape(op, input->shape, 3);
  MaxPool m;
  m.x4 = as_4d(input);
  m.out = window_output(op, m.x4->shape, input->shape, w, ceil_mode);
  m.args = window_args(w);
  m.values = run_pool(OpId::max_pool2d, input, m.x4, m.out, m.args, input->dtype);
  return m;
}

}  // namespace

int64_t pool_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool ceil_mode) {
  int64_t num = in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t q = num / stride;
  if (num % stride != 0 && num < 0) --q;  // floor division, as torch's div_rtn
  int64_t out = q + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;  // the last window must start inside
  return out;
}

TensorPtr max_pool2d(const TensorPtr& input, const Dims& kernel_size, const Dims& stride, const Dims& padding,
                     const Dims& dilation, bool ceil_mode) {
  OpScope scope("max_pool2d");  // named by OutOfMemoryError
  MaxPool m = max_pool_values(OpId::max_pool2d, "max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode);
  if (should_record({&input})) {
    TensorPtr indices = run_pool(OpId::max_pool2d_with_indices, input, m.x4, m.out, m.args, DType::Int64);
    record_max_pool2d(input, indices, {kernel_size, stride, padding, dilation, ceil_mode, true, std::nullopt},
                      m.values);
  }
  return m.values;
}

TensorPtr avg_pool2d(const TensorPtr& input, const Dims& kernel_size, const Dims& stride, const Dims& padding,
                     bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  OpScope scope("avg_pool2d");  // named by OutOfMemoryError
  const char* op = "avg_pool2d";
  check_device_and_dtype(OpId::avg_pool2d, input);
  Window w = check_window(op, kernel_size, stride, padding, Dims{1});
  check_divisor(op, divisor_override);
  check_input_shape(op, input->shape, 3);
  TensorPtr x4 = as_4d(input);
  Shape out = window_output(op, x4->shape, input->shape, w, ceil_mode);
  OpArgs a = window_args(w);
  a.pool_count_include_pad = count_include_pad;
  a.pool_divisor = divisor_override ? *divisor_override : 0;
  TensorPtr r = run_pool(OpId::avg_pool2d, input, x4, out, a, input->dtype);
  if (should_record({&input}))
    record_avg_pool2d(input, {kernel_size, stride, padding, Dims{1}, ceil_mode, count_include_pad, divisor_override}, r);
  return r;
}

TensorPtr adaptive_avg_pool2d(const TensorPtr& input, const std::vector<std::optional<int64_t>>& output_size) {
  OpScope scope("adaptive_avg_pool2d");  // named by OutOfMemoryError
  const char* op = "adaptive_avg_pool2d";
  check_device_and_dtype(OpId::adaptive_avg_pool2d, input);
  if (output_size.size() != 2)
    throw ValueError("[adaptive_avg_pool2d] output_size must have two entries (H, W), got " +
                     std::to_string(output_size.size()));
  check_input_shape(op, input->shape, 2);
  TensorPtr x4 = as_4d(input);
  Shape out = x4->shape;
  for (int d = 0; d < 2; ++d) {
    const std::optional<int64_t>& s = output_size[d];
    out[2 + d] = s ? *s : x4->shape[2 + d];  // None keeps the input size
    if (out[2 + d] < 0)
      throw ValueError("[adaptive_avg_pool2d] output_size must be non-negative, got " + std::to_string(out[2 + d]));
  }
  TensorPtr r = run_pool(OpId::adaptive_avg_pool2d, input, x4, out, OpArgs{}, input->dtype);
  if (should_record({&input})) record_adaptive_avg_pool2d(input, r);
  return r;
}

// ---- max_pool2d_with_indices and the pooling gradients ----

std::pair<TensorPtr, TensorPtr> max_pool2d_with_indices(const TensorPtr& input, const Dims& kernel_size,
                                                        const Dims& stride, const Dims& padding, const Dims& dilation,
                                                        bool ceil_mode) {
  OpScope scope("max_pool2d_with_indices");  // named by OutOfMemoryError
  MaxPool m = max_pool_values(OpId::max_pool2d_with_indices, "max_pool2d_with_indices", input, kernel_size, stride,
                              padding, dilation, ceil_mode);
  TensorPtr indices = run_pool(OpId::max_pool2d_with_indices, input, m.x4, m.out, m.args, DType::Int64);
  if (should_record({&input}))
    record_max_pool2d(input, indices, {kernel_size, stride, padding, dilation, ceil_mode, true, std::nullopt},
                      m.values);
  return {m.values, indices};
}

namespace {

// The backward ops' common checks after the device and dtype: input_shape as the forward takes
// it, and `grad` (and `also`, when given) of the shape `want4` has in input_shape's rank.
void check_grad_shape(const char* op, const char* what, const Tensor& t, const Shape& want4, const Shape& input_shape) {
  Shape want = want4;
  if (input_shape.size() == 3) want.erase(want.begin());
  if (t.shape != want)
    throw ValueError(std::string("[") + op + "] " + what + " has shape " + shape_str(t.shape) + ", but pooling input " +
                     shape_str(input_shape) + " gives " + shape_str(want));
}

// Runs a backward row into a fresh gradient of input_shape (zeros when there is no gradient).
TensorPtr run_backward(OpId op, std::vector<Operand> ins, const Shape& input_shape, const OpArgs& a, DType dtype,
                       Device* dev) {
  auto [gx, result] = fresh(as_4d(input_shape), input_shape.size(), dtype, dev);
  if (gx->numel() == 0) return result;
  if (ins[0].t->numel() == 0) {
    fill_into(gx, Scalar::from_int(0));
    return result;
  }
  for (Operand& x : ins)
    if (x.t->ndim() == 3) x.t = unsqueeze(x.t, 0);
  run_op_into(op, std::move(ins), a, gx);
  return result;
}

}  // namespace

TensorPtr max_pool2d_backward(const TensorPtr& grad_output, const TensorPtr& indices, const Shape& input_shape,
                              const Dims& kernel_size, const Dims& stride, const Dims& padding, const Dims& dilation,
                              bool ceil_mode) {
  OpScope scope("max_pool2d_backward");  // named by OutOfMemoryError
  const char* op = "max_pool2d_backward";
  check_same_device(op, {{"grad_output", grad_output.get()}, {"indices", indices.get()}});
  check_dtype_supported(OpId::max_pool2d_backward, grad_output->dtype, grad_output->device());
  if (indices->dtype != DType::Int64)
    throw TypeError(std::string("[max_pool2d_backward] indices must be int64, got ") + dtype_name(indices->dtype));
  Window w = check_window(op, kernel_size, stride, padding, dilation);
  check_input_shape(op, input_shape, 3);
  Shape out = window_output(op, as_4d(input_shape), input_shape, w, ceil_mode);
  check_grad_shape(op, "grad_output", *grad_output, out, input_shape);
  check_grad_shape(op, "indices", *indices, out, input_shape);
  OpArgs a = window_args(w);
  a.out_dtype = grad_output->dtype;  // the Cast rule: the kernel runs in the gradient's dtype
  return run_backward(OpId::max_pool2d_backward, {grad_output, indices}, input_shape, a, grad_output->dtype,
                      grad_output->device());
}

TensorPtr avg_pool2d_backward(const TensorPtr& grad_output, const Shape& input_shape, const Dims& kernel_size,
                              const Dims& stride, const Dims& padding, bool ceil_mode, bool count_include_pad,
                              std::optional<int64_t> divisor_override) {
  OpScope scope("avg_pool2d_backward");  // named by OutOfMemoryError
  const char* op = "avg_pool2d_backward";
  check_device_and_dtype(OpId::avg_pool2d_backward, grad_output);
  Window w = check_window(op, kernel_size, stride, padding, Dims{1});
  check_divisor(op, divisor_override);
  check_input_shape(op, input_shape, 3);
  Shape out = window_output(op, as_4d(input_shape), input_shape, w, ceil_mode);
  check_grad_shape(op, "grad_output", *grad_output, out, input_shape);
  OpArgs a = window_args(w);
  a.pool_count_include_pad = count_include_pad;
  a.pool_divisor = divisor_override ? *divisor_override : 0;
  return run_backward(OpId::avg_pool2d_backward, {grad_output}, input_shape, a, grad_output->dtype,
                      grad_output->device());
}

TensorPtr adaptive_avg_pool2d_backward(const TensorPtr& grad_output, const Shape& input_shape) {
  OpScope scope("adaptive_avg_pool2d_backward");  // named by OutOfMemoryError
  const char* op = "adaptive_avg_pool2d_backward";
  check_device_and_dtype(OpId::adaptive_avg_pool2d_backward, grad_output);
  check_input_shape(op, input_shape, 2);
  // grad_output: the input's leading dims and any (OH, OW)
  Shape out = as_4d(input_shape);
  const Shape& gs = grad_output->shape;
  if (gs.size() == input_shape.size()) out[2] = gs[gs.size() - 2], out[3] = gs[gs.size() - 1];
  check_grad_shape(op, "grad_output", *grad_output, out, input_shape);
  return run_backward(OpId::adaptive_avg_pool2d_backward, {grad_output}, input_shape, OpArgs{}, grad_output->dtype,
                      grad_output->device());
}

}  // namespace bm
