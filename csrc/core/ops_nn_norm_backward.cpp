// layer_norm_backward and batch_norm_backward: argument checks (devices, dtypes, shapes, in that
// order) and preparation in front of their rows' kernels (csrc/cpu/norm_backward.cpp,
// csrc/metal/ops_norm_backward.cpp + shaders/norm_backward.metal).
//
// grad_input has a kernel each. The weight and bias gradients are sums over every dim but the
// parameter's, composed from registry ops: the reduction engine's sums already run on every
// backend, any strides, deterministically and split across cores / threadgroups, which a
// per-parameter kernel would have to redo (with one thread per column it would also serialise
// over the batch). The cost is a full-size temporary (grad * xhat) in the accumulation dtype.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "core/norm_checks.h"
#include "core/ops_norm.h"
#include "core/memory.h"

namespace bm {

using namespace norm_detail;

namespace {

void check_grad_shape(const char* op, const Tensor& grad, const Tensor& input) {
  if (grad.shape != input.shape)
    throw ValueError(std::string("[") + op + "] grad_output has shape " + shape_str(grad.shape) +
                     " but input has shape " + shape_str(input.shape));
}

TensorPtr zeros(const Shape& s, DType d, Device* dev) { return full(s, Scalar::from_int(0), d, dev); }

}  // namespace

NormGrads layer_norm_backward(const TensorPtr& grad_out, const TensorPtr& input, const Dims& normalized_shape,
                              const TensorPtr& weight, const TensorPtr& bias, double eps) {
  OpScope scope("layer_norm_backward");  // named by OutOfMemoryError
  const char* op = "layer_norm_backward";
  const Named args = named({{"grad_output", &grad_out}, {"input", &input}, {"weight", &weight}, {"bias", &bias}});
  check_same_device(op, args);
  Device* dev = input->device();
  check_floating(op, "input", *input);
  check_dtype_supported(OpId::layer_norm_backward, input->dtype, dev);
  for (const auto& [name, t] : args) check_floating(op, name, *t);

  const Shape ns(normalized_shape.begin(), normalized_shape.end());
  const size_t k = ns.size(), nd = input->shape.size();
  check_grad_shape(op, *grad_out, *input);
  check_normalized_shape(op, ns, *input);
  check_param_shapes(op, args, 2, ns);

  NormGrads r;
  r.input = empty_tensor(input->shape, input->dtype, dev);
  if (input->numel() == 0) {
    if (weight) r.weight = zeros(ns, weight->dtype, dev);
    if (bias) r.bias = zeros(ns, bias->dtype, dev);
    return r;
  }
  OpArgs a;
  a.norm_eps = eps;
  a.norm_ndim = int64_t(k);
  a.norm_weight = bool(weight);
  // grad first: the row's FloatOnly rule computes in input 0's dtype, which must be the input's.
  std::vector<Operand> xs{cast(grad_out, input->dtype), input};
  if (weight) xs.push_back(contiguous(cast(weight, input->dtype)));  // dense over the row, as in layer_norm
  run_op_into(OpId::layer_norm_backward, xs, a, r.input);

  if (weight || bias) {
    const DType acc = acc_dtype(input->dtype);
    const TensorPtr g = cast(grad_out, acc);
    Dims lead;
    for (size_t d = 0; d + k < nd; ++d) lead.push_back(int64_t(d));
    // Without leading dims there is nothing to sum; clone so the grad never aliases grad_output.
    auto sum_lead = [&](const TensorPtr& t) { return lead.empty() ? clone(t) : reduce(OpId::sum, t, lead, false); };
    if (weight) {
      const TensorPtr xhat = layer_norm(cast(input, acc), normalized_shape, nullptr, nullptr, eps);
      r.weight = cast(sum_lead(binary(OpId::mul, g, xhat)), weight->dtype);
    }
    if (bias) r.bias = cast(sum_lead(g), bias->dtype);
  }
  return r;
}

NormGrads batch_norm_backward(const TensorPtr& grad_out, const TensorPtr& input, const TensorPtr& weight,
                              const TensorPtr& running_mean, const TensorPtr& running_var, bool training, double eps) {
  OpScope scope("batch_norm_backward");  // named by OutOfMemoryError
  const char* op = "batch_norm_backward";
  const Named args = named({{"grad_output", &grad_out}, {"input", &input}, {"weight", &weight},
                            {"running_mean", &running_mean}, {"running_var", &running_var}});
  check_same_device(op, args);
  Device* dev = input->device();
  check_floating(op, "input", *input);
  check_dtype_supported(OpId::batch_norm_backward, input->dtype, dev);
  for (const auto& [name, t] : args) check_floating(op, name, *t);

  if (input->ndim() < 2)
    throw ValueError("[batch_norm_backward] expected an input of shape (N, C, ...) with at least 2 dims, got shape " +
                     shape_str(input->shape));
  check_grad_shape(op, *grad_out, *input);
  const int64_t channels = input->shape[1];
  for (size_t i = 2; i < args.size(); ++i)
    if (args[i].second->shape != Shape{channels})
      throw ValueError(std::string("[batch_norm_backward] ") + args[i].first + " should have shape (" +
                       std::to_string(channels) + ",) for an input with " + std::to_string(channels) +
                       " channels, got shape " + shape_str(args[i].second->shape));
  if (!training && !(running_mean && running_var))
    throw ValueError("[batch_norm_backward] running_mean and running_var must be given in evaluation mode");

  const DType acc = acc_dtype(input->dtype);
  const DType param = weight ? weight->dtype : input->dtype;
  NormGrads r;
  r.input = empty_tensor(input->shape, input->dtype, dev);
  if (input->numel() == 0) {
    if (weight) r.weight = zeros({channels}, weight->dtype, dev);
    r.bias = zeros({channels}, param, dev);
    return r;
  }
  const int64_t count = input->numel() / channels;  // values per channel
  Dims dims{0};
  for (int64_t d = 2; d < input->ndim(); ++d) dims.push_back(d);
  Dims along(size_t(input->ndim()), 1);  // (1, C, 1, ...): a per-channel vector over the input
  along[1] = channels;
  auto per_channel = [&](const TensorPtr& v) { return reshape(v, along); };

  const TensorPtr x = cast(input, acc), g = cast(grad_out, acc);
  TensorPtr mean, var;
  if (training) {
    mean = reduce(OpId::mean, x, dims, false);
    var = reduce(OpId::var, x, dims, false, 0);  // biased, as the forward normalises with
  } else {
    mean = cast(running_mean, acc);
    var = cast(running_var, acc);
  }
  const TensorPtr rstd = unary(OpId::rsqrt, binary(OpId::add, var, Scalar::from_double(eps)));
  const TensorPtr sum_g = reduce(OpId::sum, g, dims, false);
  // sum of grad * xhat = rstd * sum(grad * (x - mean)): centred first, so a large mean cannot cancel
  const TensorPtr centred = binary(OpId::sub, x, per_channel(mean));
  const TensorPtr sum_gxhat = binary(OpId::mul, reduce(OpId::sum, binary(OpId::mul, g, centred), dims, false), rstd);

  // grad_input = a * (g - sum_g / M - xhat * sum_gxhat / M), a = weight * rstd, as
  // (g * a + (x - mean) * k) + c with per-channel k = -a * rstd * sum_gxhat / M, c = -a * sum_g / M.
  const TensorPtr a = weight ? binary(OpId::mul, rstd, cast(weight, acc)) : rstd;
  std::vector<TensorPtr> cols;
  if (training) {
    const Scalar inv_m = Scalar::from_double(1.0 / double(count));
    const TensorPtr kk = unary(OpId::neg, binary(OpId::mul, binary(OpId::mul, binary(OpId::mul, a, rstd), sum_gxhat),
                                                 inv_m));
    const TensorPtr c = unary(OpId::neg, binary(OpId::mul, binary(OpId::mul, a, sum_g), inv_m));
    cols = {a, kk, mean, c};
  } else {
    const TensorPtr z = zeros({channels}, acc, dev);
    cols = {a, z, z, z};  // the kernel reads only a
  }
  const TensorPtr coef = stack(cols, 1);  // (C, 4), contiguous
  Shape strides(input->shape.size(), 0);
  strides[1] = coef->strides[0];
  const TensorPtr coef_x = make_view(coef, input->shape, strides, coef->offset);
  OpArgs oa;
  oa.out_dtype = input->dtype;  // Cast rule: grad and input in the input's dtype, coef in acc's
  oa.norm_training = training;
  run_op_into(OpId::batch_norm_backward, {cast(grad_out, input->dtype), input, coef_x}, oa, r.input);

  if (weight) r.weight = cast(sum_gxhat, weight->dtype);
  r.bias = cast(sum_g, param);
  return r;
}

}  // namespace bm
