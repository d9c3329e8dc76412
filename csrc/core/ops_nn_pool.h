// 2-D pooling with torch's semantics: max_pool2d, avg_pool2d, adaptive_avg_pool2d.
//
// Inputs are (N, C, H, W) or (C, H, W), any strides. Window arguments take one value (used for
// both H and W) or two (H, W); an empty stride means "the kernel size", as in torch.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "core/ops.h"

namespace bm {

TensorPtr max_pool2d(const TensorPtr& input, const Dims& kernel_size, const Dims& stride, const Dims& padding,
                     const Dims& dilation, bool ceil_mode);
TensorPtr avg_pool2d(const TensorPtr& input, const Dims& kernel_size, const Dims& stride, const Dims& padding,
                     bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override);
// output_size: (H, W); nullopt keeps that input size.
TensorPtr adaptive_avg_pool2d(const TensorPtr& input, const std::vector<std::optional<int64_t>>& output_size);

// max_pool2d that also returns torch's indices: (values, int64 indices), each window's maximum
// named by its flat index h * W + w in its input plane (the first maximum; a NaN wins, the last
// one when several; a window that dilation made miss every element names its first tap, as torch).
std::pair<TensorPtr, TensorPtr> max_pool2d_with_indices(const TensorPtr& input, const Dims& kernel_size,
                                                        const Dims& stride, const Dims& padding, const Dims& dilation,
                                                        bool ceil_mode);

// Gradients with respect to the pooling input, of input_shape ((N, C, H, W) or (C, H, W)) and
// grad_output's dtype, for the forward's arguments. grad_output (and indices) must have the shape
// the forward gives. Each input element sums, in a fixed order (window rows, then columns,
// ascending), the gradients of the windows covering it: for max pooling those whose index names
// it (indices from max_pool2d_with_indices; an index naming no element its window covers
// contributes nothing), for average pooling each window's gradient over its divisor.
TensorPtr max_pool2d_backward(const TensorPtr& grad_output, const TensorPtr& indices, const Shape& input_shape,
                              const Dims& kernel_size, const Dims& stride, const Dims& padding, const Dims& dilation,
                              bool ceil_mode);
TensorPtr avg_pool2d_backward(const TensorPtr& grad_output, const Shape& input_shape, const Dims& kernel_size,
                              const Dims& stride, const Dims& padding, bool ceil_mode, bool count_include_pad,
                              std::optional<int64_t> divisor_override);
// grad_output: (N, C, OH, OW) (or (C, OH, OW)) for any output size.
TensorPtr adaptive_avg_pool2d_backward(const TensorPtr& grad_output, const Shape& input_shape);

// torch's pooling output size along one dim (ceil_mode: the last window must start inside the
// input or its left padding). Shared with the tests of the geometry.
int64_t pool_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool ceil_mode);

}  // namespace bm
