// Normalisation ops with torch.nn.functional's semantics. Checks run in the project's order:
// devices of every tensor argument, then dtypes, then shapes; only then empty inputs.
#pragma once
#include "core/ops.h"

namespace bm {

// Normalises over the trailing dims given by normalized_shape: (x - mean) / sqrt(var + eps) with
// the biased variance, then * weight + bias (each optional, shaped normalized_shape). Any input
// strides; the result is contiguous.
TensorPtr layer_norm(const TensorPtr& input, const Dims& normalized_shape, const TensorPtr& weight,
                     const TensorPtr& bias, double eps);

// input (N, C, ...). training: normalise with the batch's mean and biased variance per channel and,
// when running stats are given, update them in place on their device:
//   running = (1 - momentum) * running + momentum * batch_stat   (running_var gets the UNBIASED var).
// Otherwise normalise with the running stats. weight/bias (C,) are optional; running stats may be
// null only in training. Mixed float dtypes are accepted; statistics are computed in float32
// (float64 for float64 inputs) and the running stats keep their own dtypes.
TensorPtr batch_norm(const TensorPtr& input, const TensorPtr& running_mean, const TensorPtr& running_var,
                     const TensorPtr& weight, const TensorPtr& bias, bool training, double momentum, double eps);

// Gradients of layer_norm / batch_norm: input's, weight's and bias's (null where not computed).
struct NormGrads {
  TensorPtr input, weight, bias;
};

// layer_norm's backward: grad_input from a kernel that recomputes each row's mean and rstd;
// grad_weight = sum of grad * (x - mean) * rstd over the leading dims (when weight is given),
// grad_bias = sum of grad over the leading dims (when bias is given; bias is only looked at for
// that and its dtype). Half types accumulate in float32. The grads have weight's / bias's dtype.
NormGrads layer_norm_backward(const TensorPtr& grad_out, const TensorPtr& input, const Dims& normalized_shape,
                              const TensorPtr& weight, const TensorPtr& bias, double eps);

// batch_norm's backward for input (N, C, ...): training uses the batch's mean and biased variance
// (recomputed from input), evaluation the running stats (grad_input = grad * weight * rstd).
// grad_weight when weight is given (weight's dtype), grad_bias always (per-channel sum of grad,
// in weight's dtype, or the input's without weight).
NormGrads batch_norm_backward(const TensorPtr& grad_out, const TensorPtr& input, const TensorPtr& weight,
                              const TensorPtr& running_mean, const TensorPtr& running_var, bool training, double eps);

}  // namespace bm
