// Rules of the nn ops that have backward kernels of their own (conv2d, pools, norms, losses,
// activations): each calls the backward op function, which runs a registry row on every backend.
// Their backward kernels have no rules of their own: create_graph through them is an error.
#include "autograd/rules_nn.h"

#include "autograd/record.h"
#include "autograd/rules.h"
#include "core/errors.h"
#include "core/ops_index.h"
#include "core/ops_nn_misc.h"
#include "core/ops_nn_pool.h"
#include "core/ops_norm.h"

namespace bm {

namespace {

using Grads = std::vector<TensorPtr>;

// create_graph=True runs rules in grad mode; these kernels are not recorded, so refuse rather than
// return gradients without history (silently zero second derivatives).
void no_double_backward(const char* op, const TensorPtr&) {
  if (grad_enabled())
    throw UnsupportedError(std::string("[") + op + "] second derivatives (create_graph=True) through " + op +
                           " are not supported");
}

const char* node_name(OpId op) { return op_row(op).grad->node_name; }

// The batch-and-space dims of an (N, C, H, W) or (C, H, W) gradient: what a per-channel bias sums over.
Dims bias_dims(const TensorPtr& g) { return g->ndim() == 4 ? Dims{0, 2, 3} : Dims{1, 2}; }

}  // namespace

void record_conv2d(const TensorPtr& input, const TensorPtr& weight, const TensorPtr& bias, const Conv2dOptions& o,
                   const TensorPtr& out) {
  Shape in_shape = input->shape;
  record_saved_fn(node_name(OpId::conv2d), {input, weight, bias}, out, {input, weight},
                  [o, in_shape](const TensorPtr& g, const std::vector<TensorPtr>& s, const std::vector<bool>& need) -> Grads {
    no_double_backward("conv2d", g);
    const TensorPtr &x = s[0], &w = s[1];
    return {need[0] ? conv2d_backward_input(g, w, in_shape, o) : nullptr,
            need[1] ? conv2d_backward_weight(g, x, w->shape, o) : nullptr,
            need[2] ? reduce(OpId::sum, g, bias_dims(g), false) : nullptr};
  });
}

void record_max_pool2d(const TensorPtr& input, const TensorPtr& indices, const PoolCall& c, const TensorPtr& out) {
  Shape in_shape = input->shape;
  record_saved_fn(node_name(OpId::max_pool2d), {input}, out, {indices},
                  [c, in_shape](const TensorPtr& g, const std::vector<TensorPtr>& s, const std::vector<bool>&) -> Grads {
    no_double_backward("max_pool2d", g);
    return {max_pool2d_backward(g, s[0], in_shape, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode)};
  });
}

void record_avg_pool2d(const TensorPtr& input, const PoolCall& c, const TensorPtr& out) {
  Shape in_shape = input->shape;
  record_fn(node_name(OpId::avg_pool2d), {input}, out, [c, in_shape](const TensorPtr& g) -> Grads {
    no_double_backward("avg_pool2d", g);
    return {avg_pool2d_backward(g, in_shape, c.kernel, c.stride, c.padding, c.ceil_mode, c.count_include_pad,
                                c.divisor)};
  });
}

void record_adaptive_avg_pool2d(const TensorPtr& input, const TensorPtr& out) {
  Shape in_shape = input->shape;
  record_fn(node_name(OpId::adaptive_avg_pool2d), {input}, out, [in_shape](const TensorPtr& g) -> Grads {
    no_double_backward("adaptive_avg_pool2d", g);
    return {adaptive_avg_pool2d_backward(g, in_shape)};
  });
}

void record_layer_norm(const TensorPtr& input, const Dims& normalized_shape, const TensorPtr& weight,
                       const TensorPtr& bias, double eps, const TensorPtr& out) {
  bool has_bias = bool(bias);
  record_saved_fn(node_name(OpId::layer_norm), {input, weight, bias}, out, {input, weight},
                  [normalized_shape, eps, has_bias, bias_geom = bias ? detach(bias) : nullptr](
                      const TensorPtr& g, const std::vector<TensorPtr>& s, const std::vector<bool>&) -> Grads {
    no_double_backward("layer_norm", g);
    NormGrads r = layer_norm_backward(g, s[0], normalized_shape, s[1], has_bias ? bias_geom : nullptr, eps);
    return {r.input, r.weight, r.bias};
  });
}

void record_batch_norm(const TensorPtr& input, const TensorPtr& running_mean, const TensorPtr& running_var,
                       const TensorPtr& weight, const TensorPtr& bias, bool training, double eps,
                       const TensorPtr& out) {
  std::vector<TensorPtr> saved{input, weight};
  if (!training) { saved.push_back(running_mean); saved.push_back(running_var); }
  record_saved_fn(node_name(OpId::batch_norm), {input, weight, bias}, out, saved,
                  [training, eps](const TensorPtr& g, const std::vector<TensorPtr>& s,
                                  const std::vector<bool>& need) -> Grads {
    no_double_backward("batch_norm", g);
    NormGrads r = batch_norm_backward(g, s[0], s[1], training ? nullptr : s[2], training ? nullptr : s[3],
                                      training, eps);
    return {r.input, r.weight, need[2] ? r.bias : nullptr};
  });
}

void record_nll_loss(const TensorPtr& input, const TensorPtr& target, const TensorPtr& weight, int64_t ignore_index,
                     const std::string& reduction, const TensorPtr& out) {
  record_saved_fn(node_name(OpId::nll_loss), {input}, out, {input, target, weight},
                  [ignore_index, reduction](const TensorPtr& g, const std::vector<TensorPtr>& s,
                                            const std::vector<bool>&) -> Grads {
    no_double_backward("nll_loss", g);
    return {nll_loss_backward(g, s[0], s[1], s[2], ignore_index, reduction)};
  });
}

void record_embedding(const TensorPtr& input, const TensorPtr& weight, std::optional<int64_t> padding_idx,
                      const TensorPtr& out) {
  record_saved_fn(node_name(OpId::embedding), {nullptr, weight}, out, {input},
                  [padding_idx, ws = weight->shape](const TensorPtr& g, const std::vector<TensorPtr>& s,
                                                     const std::vector<bool>&) -> Grads {
    no_double_backward("embedding", g);
    const TensorPtr& idx = s[0];
    const int64_t dim = ws[1];
    TensorPtr rows = reshape(g, {-1, dim});
    TensorPtr flat = reshape(idx, {-1});
    if (padding_idx) {  // the padding row gets no gradient
      TensorPtr keep = unsqueeze(binary(OpId::ne, flat, Scalar::from_int(*padding_idx)), 1);
      rows = where(keep, rows, Scalar::from_int(0));
    }
    TensorPtr zeros = full(ws, Scalar::from_int(0), g->dtype, g->device());
    return {nullptr, index_add(zeros, 0, flat, rows)};
  });
}

void register_nn_rules(GradRule* table) {
  auto by_op = [&](OpId op, const char* name) {
    GradRule& r = table[size_t(op)];
    r.node_name = name;
    r.recorded_by_op = true;
  };
  by_op(OpId::conv2d, "ConvolutionBackward0");
  by_op(OpId::max_pool2d, "MaxPool2DWithIndicesBackward0");
  by_op(OpId::avg_pool2d, "AvgPool2DBackward0");
  by_op(OpId::adaptive_avg_pool2d, "AdaptiveAvgPool2DBackward0");
  by_op(OpId::layer_norm, "NativeLayerNormBackward0");
  by_op(OpId::batch_norm, "NativeBatchNormBackward0");
  by_op(OpId::nll_loss, "NllLossBackward0");
  by_op(OpId::embedding, "EmbeddingBackward0");
  by_op(OpId::index_select, "IndexSelectBackward0");  // core/ops_index_rows.cpp records these two
  by_op(OpId::index_add, "IndexAddBackward0");
}

}  // namespace bm
