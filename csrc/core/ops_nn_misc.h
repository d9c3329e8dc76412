// dropout, embedding, nll_loss, cross_entropy and linear: argument checks (device, then dtype, then
// shape, then index values) in front of the dropout/embedding/nll_loss kernels and existing ops.
#pragma once
#include <optional>
#include <string>

#include "core/ops.h"
#include "core/random.h"

namespace bm {

// torch.nn.functional.dropout: training=false or p == 0 -> the input's values (training=false
// returns the input itself, p == 0 a copy); p == 1 -> input * 0; else the Philox mask of
// csrc/cpu/nn_misc.cpp scaled by 1 / (1 - p). ValueError for p outside [0, 1].
TensorPtr dropout(const TensorPtr& input, double p, bool training, Generator* gen = nullptr);

// Rows of weight (num_embeddings, dim) gathered by int32/int64 indices: input.shape + (dim,).
// IndexError for an index outside [0, num_embeddings), found on the host before any launch.
TensorPtr embedding(const TensorPtr& input, const TensorPtr& weight, std::optional<int64_t> padding_idx);

// reduction: "none" | "mean" | "sum".
TensorPtr nll_loss(const TensorPtr& input, const TensorPtr& target, const TensorPtr& weight, int64_t ignore_index,
                   const std::string& reduction);
// nll_loss's gradient with respect to input (input's shape): -weight[t] * grad at each target t's
// class, 0 at every other class and at targets equal to ignore_index; 'mean' divides by the total
// weight of the targets that are not ignored. grad_out: 0-d for 'mean' / 'sum', target-shaped for
// 'none'. Targets were range-checked by the forward; out-of-range ones give zero rows here.
TensorPtr nll_loss_backward(const TensorPtr& grad_out, const TensorPtr& input, const TensorPtr& target,
                            const TensorPtr& weight, int64_t ignore_index, const std::string& reduction);
TensorPtr cross_entropy(const TensorPtr& input, const TensorPtr& target, const TensorPtr& weight,
                        int64_t ignore_index, const std::string& reduction, double label_smoothing);

// input @ weight.T + bias (weight (out, in) or (in,)); input 1-D or with any leading dims.
TensorPtr linear(const TensorPtr& input, const TensorPtr& weight, const TensorPtr& bias);

// For the nll_loss kernels: a view of `input` (N, C, d1...) or (C,) with the class dim removed
// (the element of class 0 at each target position), and the class dim's stride.
inline Tensor nll_input_view(const Tensor& input, int64_t* class_stride) {
  int cd = input.ndim() == 1 ? 0 : 1;
  Tensor v = input;
  *class_stride = input.strides[size_t(cd)];
  v.shape.erase(v.shape.begin() + cd);
  v.strides.erase(v.strides.begin() + cd);
  return v;
}

}  // namespace bm
