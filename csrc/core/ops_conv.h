// conv2d: the op function in front of the conv2d kernels (torch.nn.functional.conv2d's meaning).
#pragma once
#include <string>
#include <vector>

#include "core/tensor.h"

namespace bm {

struct Conv2dOptions {
  // One value (both dims) or two (h, w) each; checked by conv2d after the device and dtype checks.
  std::vector<int64_t> stride{1}, padding{0}, dilation{1};
  std::string padding_mode;  // "": `padding` holds the amounts; "same" or "valid" as in torch
  int64_t groups = 1;
};

// input (N, C, H, W) or unbatched (C, H, W); weight (O, C / groups, kH, kW); bias (O) or null.
// Checks, in order: devices (input, weight, bias), dtypes, then shapes and arguments.
TensorPtr conv2d(const TensorPtr& input, const TensorPtr& weight, const TensorPtr& bias, const Conv2dOptions& opts);

// The gradients of conv2d with respect to its input and its weight (the bias's is grad_output
// summed over (N, H, W)), for the forward's arguments `opts`. input_shape is (N, C, H, W) or
// unbatched (C, H, W), with grad_output (N, O, OH, OW) or (O, OH, OW) to match; the result has
// input_shape / weight_shape and grad_output's dtype. Checks, in order: devices (grad_output,
// weight / input), dtypes (the same floating dtype), then shapes: grad_output must have the shape
// the forward gives for these shapes and arguments.
TensorPtr conv2d_backward_input(const TensorPtr& grad_output, const TensorPtr& weight, const Shape& input_shape,
                                const Conv2dOptions& opts);
TensorPtr conv2d_backward_weight(const TensorPtr& grad_output, const TensorPtr& input, const Shape& weight_shape,
                                 const Conv2dOptions& opts);

}  // namespace bm
