// layer_norm and batch_norm: argument checks and preparation in front of their kernels
// (csrc/cpu/norm.cpp, csrc/metal/ops_norm.cpp + shaders/norm.metal).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "core/norm_checks.h"
#include "core/ops_norm.h"
#include "autograd/record.h"
#include "autograd/rules_nn.h"
#include "core/memory.h"

namespace bm {

using namespace norm_detail;

TensorPtr layer_norm(const TensorPtr& input, const Dims& normalized_shape, const TensorPtr& weight,
                     const TensorPtr& bias, double eps) {
  OpScope scope("layer_norm");  // named by OutOfMemoryError
  const Named args = named({{"input", &input}, {"weight", &weight}, {"bias", &bias}});
  check_same_device("layer_norm", args);
  Device* dev = input->device();
  check_dtype_supported(OpId::layer_norm, input->dtype, dev);
  for (size_t i = 1; i < args.size(); ++i) check_floating("layer_norm", args[i].first, *args[i].second);

  const Shape ns(normalized_shape.begin(), normalized_shape.end());
  const size_t k = ns.size();
  check_normalized_shape("layer_norm", ns, *input);
  check_param_shapes("layer_norm", args, 1, ns);

  TensorPtr out = empty_tensor(input->shape, input->dtype, dev);
  if (out->numel() == 0) return out;
  const bool record = should_record({&input, &weight, &bias});
  GradModeGuard no_recording(false);  // one node for the whole op (recorded below), not its parts
  OpArgs a;
  a.norm_eps = eps;
  a.norm_ndim = int64_t(k);
  a.norm_weight = bool(weight);
  a.norm_bias = bool(bias);
  // The kernels index weight and bias densely over the row; they are parameter-sized, so making
  // them contiguous (in the input's dtype, which the dispatcher casts to) is one small copy at most.
  std::vector<Operand> xs{input};
  if (weight) xs.push_back(contiguous(cast(weight, input->dtype)));
  if (bias) xs.push_back(contiguous(cast(bias, input->dtype)));
  run_op_into(OpId::layer_norm, xs, a, out);
  if (record) record_layer_norm(input, normalized_shape, weight, bias, eps, out);
  return out;
}

TensorPtr batch_norm(const TensorPtr& input, const TensorPtr& running_mean, const TensorPtr& running_var,
                     const TensorPtr& weight, const TensorPtr& bias, bool training, double momentum, double eps) {
  OpScope scope("batch_norm");  // named by OutOfMemoryError
  const Named args = named({{"input", &input}, {"running_mean", &running_mean}, {"running_var", &running_var},
                            {"weight", &weight}, {"bias", &bias}});
  check_same_device("batch_norm", args);
  Device* dev = input->device();
  check_dtype_supported(OpId::batch_norm, input->dtype, dev);
  for (size_t i = 1; i < args.size(); ++i) check_floating("batch_norm", args[i].first, *args[i].second);
  const DType acc = acc_dtype(input->dtype);

  if (input->ndim() < 2)
    throw ValueError("[batch_norm] expected an input of shape (N, C, ...) with at least 2 dims, got shape " +
                     shape_str(input->shape));
  const int64_t channels = input->shape[1];
  for (size_t i = 1; i < args.size(); ++i)
    if (args[i].second->shape != Shape{channels})
      throw ValueError(std::string("[batch_norm] ") + args[i].first + " should have shape (" +
                       std::to_string(channels) + ",) for an input with " + std::to_string(channels) +
                       " channels, got shape " + shape_str(args[i].second->shape));
  if (bool(running_mean) != bool(running_var))
    throw ValueError("[batch_norm] running_mean and running_var must be given together");
  if (!training && !running_mean)
    throw ValueError("[batch_norm] running_mean and running_var must be given in evaluation mode");
  // The running statistics are written below (training): refuse read-only ones before anything runs.
  if (training && running_mean) {
    check_writable("batch_norm (running_mean)", *running_mean);
    check_writable("batch_norm (running_var)", *running_var);
  }
  const int64_t per_channel = channels ? input->numel() / channels : 0;
  if (training && per_channel == 1)
    throw ValueError("[batch_norm] expected more than 1 value per channel when training, got input of shape " +
                     shape_str(input->shape));

  TensorPtr out = empty_tensor(input->shape, input->dtype, dev);
  if (out->numel() == 0) return out;  // as torch: an empty batch leaves the running stats alone
  const bool record = should_record({&input, &weight, &bias});
  GradModeGuard no_recording(false);  // one node for the whole op (recorded below), not its parts

  TensorPtr mean, var;
  TensorPtr new_running_mean, new_running_var;  // stored only once nothing else can fail (no memory asked)
  if (training) {
    Dims dims{0};
    for (int64_t d = 2; d < input->ndim(); ++d) dims.push_back(d);
    const TensorPtr x = cast(input, acc);  // half inputs: statistics in float32
    mean = reduce(OpId::mean, x, dims, false);
    var = reduce(OpId::var, x, dims, false, 0);
    if (running_mean) {
      // torch's order: momentum * batch + (1 - momentum) * running, in the statistics' dtype,
      // stored back into the running buffers (their own dtype and device, in place) below.
      auto blend = [&](const TensorPtr& running, const TensorPtr& batch) {
        return binary(OpId::add, binary(OpId::mul, batch, Scalar::from_double(momentum)),
                      binary(OpId::mul, cast(running, acc), Scalar::from_double(1 - momentum)));
      };
      const double unbias = double(per_channel) / double(per_channel - 1);
      new_running_mean = blend(running_mean, mean);
      new_running_var = blend(running_var, binary(OpId::mul, var, Scalar::from_double(unbias)));
    }
  } else {
    mean = cast(running_mean, acc);
    var = cast(running_var, acc);
  }

  // Per channel: scale = weight / sqrt(var + eps), shift = bias - mean * scale; then one pass
  // over the input computes x * scale + shift.
  TensorPtr scale = unary(OpId::rsqrt, binary(OpId::add, var, Scalar::from_double(eps)));
  if (weight) scale = binary(OpId::mul, scale, cast(weight, acc));
  TensorPtr shift = binary(OpId::mul, mean, scale);
  shift = bias ? binary(OpId::sub, cast(bias, acc), shift) : unary(OpId::neg, shift);

  Shape strides(input->shape.size(), 0);
  strides[1] = scale->strides[0];
  const TensorPtr scale_x = make_view(scale, input->shape, strides, scale->offset);
  strides[1] = shift->strides[0];
  const TensorPtr shift_x = make_view(shift, input->shape, strides, shift->offset);
  // Every temporary exists now: an out-of-memory error above left the running statistics as they were.
  if (new_running_mean) {
    copy_into(running_mean, new_running_mean);
    copy_into(running_var, new_running_var);
  }
  OpArgs a;
  a.out_dtype = input->dtype;  // the row's Cast rule: the kernel runs in the input's dtype and
                               // reads scale/shift in their own (statistics) dtype
  run_op_into(OpId::batch_norm, {input, scale_x, shift_x}, a, out);
  if (record) record_batch_norm(input, running_mean, running_var, weight, bias, training, eps, out);
  return out;
}

}  // namespace bm
