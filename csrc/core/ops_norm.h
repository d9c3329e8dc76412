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

}  // namespace bm
