// dropout, embedding and nll_loss on Metal (shaders/nn_misc.metal), any strides.
#include <cstdlib>

#include "core/ops_nn_misc.h"
#include "metal/kernels.h"

namespace bm::metal {

namespace {

void dropout_kernel(const KernelCall& c) {
  const Tensor& in = *c.in[0];
  Tensor& out = *c.out;
  const OpArgs& a = *c.args;
  MetalBackend& be = backend_of(out);
  const std::string name = kernel_name("dropout", out.dtype);
  int64_t index_base = 0;  // logical index of the current launch's first element
  // for_each_layout merges only dims that keep logical order, so index_base + the launch's
  // row-major index is the element's logical index, as on the CPU.
  for_each_layout({&out, &in}, [&](const Layout& L) {
    DropoutArgs r{};
    r.numel = L.numel;
    r.index_base = index_base;
    r.out_offset = L.offset[0];
    r.in_offset = L.offset[1];
    r.ndim = L.ndim;
    for (int d = 0; d < L.ndim; ++d) {
      r.shape[d] = L.shape[d];
      r.out_strides[d] = L.strides[0][d];
      r.in_strides[d] = L.strides[1][d];
    }
    r.seed = a.seed;
    r.rng_offset = a.rng_offset;
    r.p = float(a.p);
    r.scale = float(1.0 / (1.0 - a.p));
    int64_t blocks = (index_base + L.numel - 1) / 4 - index_base / 4 + 1;
    be.dispatch(name, {{&in, 0}, {&out, 1}}, &r, sizeof(r), 2, Size3{uint64_t(blocks), 1, 1}, group_1d(blocks));
    index_base += L.numel;
  });
}

void embedding_kernel(const KernelCall& c) {
  const Tensor& idx = *c.in[0];
  const Tensor& w = *c.in[1];
  Tensor& out = *c.out;
  MetalBackend& be = backend_of(out);
  const std::string name = kernel_name("embedding", out.dtype) + "_" + dtype_name(idx.dtype);
  // The output's rows, shaped like the indices.
  Tensor rows = out;
  rows.shape.pop_back();
  rows.strides.pop_back();
  for_each_layout({&rows, &idx}, [&](const Layout& L) {
    EmbeddingArgs e{};
    e.n_rows = L.numel;
    e.dim = w.shape[1];
    e.out_offset = L.offset[0];
    e.idx_offset = L.offset[1];
    e.w_offset = w.offset;
    e.w_row_stride = w.strides[0];
    e.w_col_stride = w.strides[1];
    e.out_col_stride = out.strides.back();
    e.num_embeddings = w.shape[0];
    e.ndim = L.ndim;
    for (int d = 0; d < L.ndim; ++d) {
      e.shape[d] = L.shape[d];
      e.out_strides[d] = L.strides[0][d];
      e.idx_strides[d] = L.strides[1][d];
    }
    int64_t n = e.n_rows * e.dim;
    be.dispatch(name, {{&idx, 0}, {&w, 1}, {&out, 2}}, &e, sizeof(e), 3, Size3{uint64_t(n), 1, 1}, group_1d(n));
  });
}

void nll_loss_kernel(const KernelCall& c) {
  const Tensor& input = *c.in[0];
  const Tensor& tgt = *c.in[1];
  const Tensor* w = c.nin > 2 ? c.in[2] : nullptr;
  Tensor& out = *c.out;
  MetalBackend& be = backend_of(out);
  int64_t class_stride = 0;
  Tensor iv = nll_input_view(input, &class_stride);
  for_each_layout({&out, &tgt, &iv}, [&](const Layout& L) {
    NllLossArgs n{};
    n.numel = L.numel;
    n.out_offset = L.offset[0];
    n.tgt_offset = L.offset[1];
    n.in_offset = L.offset[2];
    n.class_stride = class_stride;
    n.n_classes = input.shape[input.ndim() == 1 ? 0 : 1];
    n.ignore_index = c.args->ignore_index;
    n.has_weight = w != nullptr;
    n.w_offset = w ? w->offset : 0;
    n.w_stride = w ? w->strides[0] : 0;
    n.ndim = L.ndim;
    for (int d = 0; d < L.ndim; ++d) {
      n.shape[d] = L.shape[d];
      n.out_strides[d] = L.strides[0][d];
      n.tgt_strides[d] = L.strides[1][d];
      n.in_strides[d] = L.strides[2][d];
    }
    // Without a weight the input is bound in its slot; the kernel never reads it then.
    be.dispatch(kernel_name("nll_loss", out.dtype), {{&input, 0}, {&tgt, 1}, {w ? w : &input, 2}, {&out, 3}}, &n,
                sizeof(n), 4, Size3{uint64_t(L.numel), 1, 1}, group_1d(L.numel));
  });
}

// The input's gradient, a gather over its elements: positions (the target's dims) x classes.
void nll_loss_backward_kernel(const KernelCall& c) {
  const Tensor& g = *c.in[0];
  const Tensor& tgt = *c.in[1];
  const Tensor* w = c.nin > 2 ? c.in[2] : nullptr;
  Tensor& out = *c.out;
  MetalBackend& be = backend_of(out);
  int64_t class_stride = 0;
  Tensor ov = nll_input_view(out, &class_stride);
  const int64_t n_classes = out.shape[out.ndim() == 1 ? 0 : 1];
  for_each_layout({&ov, &g, &tgt}, [&](const Layout& L) {
    NllBackwardArgs n{};
    n.n_pos = L.numel;
    n.n_classes = n_classes;
    n.out_offset = L.offset[0];
    n.g_offset = L.offset[1];
    n.t_offset = L.offset[2];
    n.class_stride = class_stride;
    n.ignore_index = c.args->ignore_index;
    n.has_weight = w != nullptr;
    n.w_offset = w ? w->offset : 0;
    n.w_stride = w ? w->strides[0] : 0;
    // neighbouring threads take neighbouring classes when the class dim is the closer one in memory
    n.class_inner = L.ndim == 0 || std::llabs(class_stride) <= std::llabs(L.strides[0][L.ndim - 1]);
    n.ndim = L.ndim;
    for (int d = 0; d < L.ndim; ++d) {
      n.shape[d] = L.shape[d];
      n.out_strides[d] = L.strides[0][d];
      n.g_strides[d] = L.strides[1][d];
      n.t_strides[d] = L.strides[2][d];
    }
    const int64_t total = n.n_pos * n.n_classes;
    // Without a weight the grad is bound in its slot; the kernel never reads it then.
    be.dispatch(kernel_name("nll_loss_backward", out.dtype), {{&g, 0}, {&tgt, 1}, {w ? w : &g, 2}, {&out, 3}}, &n,
                sizeof(n), 4, Size3{uint64_t(total), 1, 1}, group_1d(total));
  });
}

}  // namespace

void register_nn_misc_kernels(MetalBackend& b) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType d = DType(i);
    if (d == DType::Float64) continue;  // Metal has no double
    if (op_row(OpId::dropout).dtypes & bit(d)) b.set_kernel(OpId::dropout, d, &dropout_kernel);
    if (op_row(OpId::embedding).dtypes & bit(d)) b.set_kernel(OpId::embedding, d, &embedding_kernel);
    if (op_row(OpId::nll_loss).dtypes & bit(d)) b.set_kernel(OpId::nll_loss, d, &nll_loss_kernel);
    if (op_row(OpId::nll_loss_backward).dtypes & bit(d))
      b.set_kernel(OpId::nll_loss_backward, d, &nll_loss_backward_kernel);
  }
}

}  // namespace bm::metal
