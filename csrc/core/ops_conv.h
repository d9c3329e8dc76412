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

}  // namespace bm
