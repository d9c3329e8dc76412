// 2-D pooling with torch's semantics: max_pool2d, avg_pool2d, adaptive_avg_pool2d.
//
// Inputs are (N, C, H, W) or (C, H, W), any strides. Window arguments take one value (used for
// both H and W) or two (H, W); an empty stride means "the kernel size", as in torch.
#pragma once
#include <optional>
#include <vector>

#include "core/ops.h"

namespace bm {

TensorPtr max_pool2d(const TensorPtr& input, const Dims& kernel_size, const Dims& stride, const Dims& padding,
                     const Dims& dilation, bool ceil_mode);
TensorPtr avg_pool2d(const TensorPtr& input, const Dims& kernel_size, const Dims& stride, const Dims& padding,
                     bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override);
// output_size: (H, W); nullopt keeps that input size.
TensorPtr adaptive_avg_pool2d(const TensorPtr& input, const std::vector<std::optional<int64_t>>& output_size);

// torch's pooling output size along one dim (ceil_mode: the last window must start inside the
// input or its left padding). Shared with the tests of the geometry.
int64_t pool_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool ceil_mode);

}  // namespace bm
