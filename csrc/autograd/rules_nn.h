// Recording the nn ops whose backward is a kernel of its own and needs the call's arguments (conv2d,
// the pools, the norms, embedding, nll_loss): each op function calls its record_* after the forward
// when grad mode is on and an input requires grad. The rules themselves are in rules_nn.cpp; the
// rows are marked recorded_by_op in the table so docs/ops.md and the coverage test see them.
#pragma once
#include <optional>
#include <string>

#include "core/ops.h"
#include "core/ops_conv.h"

namespace bm {

void record_conv2d(const TensorPtr& input, const TensorPtr& weight, const TensorPtr& bias, const Conv2dOptions& o,
                   const TensorPtr& out);

struct PoolCall {
  Dims kernel, stride, padding, dilation{1};
  bool ceil_mode = false, count_include_pad = true;
  std::optional<int64_t> divisor;
};
void record_max_pool2d(const TensorPtr& input, const TensorPtr& indices, const PoolCall& c, const TensorPtr& out);
void record_avg_pool2d(const TensorPtr& input, const PoolCall& c, const TensorPtr& out);
void record_adaptive_avg_pool2d(const TensorPtr& input, const TensorPtr& out);

void record_layer_norm(const TensorPtr& input, const Dims& normalized_shape, const TensorPtr& weight,
                       const TensorPtr& bias, double eps, const TensorPtr& out);
// training: the batch statistics (recomputed from input in backward); else the running ones.
void record_batch_norm(const TensorPtr& input, const TensorPtr& running_mean, const TensorPtr& running_var,
                       const TensorPtr& weight, const TensorPtr& bias, bool training, double eps,
                       const TensorPtr& out);
// weight[input]: the weight's gradient adds each output row into the row it was read from, except
// padding_idx's (as torch).
void record_embedding(const TensorPtr& input, const TensorPtr& weight, std::optional<int64_t> padding_idx,
                      const TensorPtr& out);
// The reduced loss `out` of nll_loss(input, target, weight, ignore_index, reduction).
void record_nll_loss(const TensorPtr& input, const TensorPtr& target, const TensorPtr& weight, int64_t ignore_index,
                     const std::string& reduction, const TensorPtr& out);

}  // namespace bm
