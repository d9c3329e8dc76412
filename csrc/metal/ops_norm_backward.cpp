// layer_norm_backward and batch_norm_backward on Metal (shaders/norm_backward.metal). The op layer
// (core/ops_nn_norm_backward.cpp) has checked everything; the weight arrives dense, batch_norm's
// per-channel coefficients as a float (C, 4) tensor viewed with zero strides over the input's shape.
#include <algorithm>

#include "core/ops.h"
#include "metal/kernels.h"

namespace bm::metal {

namespace {

// Rows at most this long run one thread per row (no barriers, no collectives).
constexpr int64_t kSerialMax = 32;

// Dims [from, to) of t; offset 0 unless keep_offset (the trailing dims' strides are relative).
Tensor dims_view(const Tensor& t, size_t from, size_t to, bool keep_offset) {
  Tensor v = t;
  v.shape.assign(t.shape.begin() + int64_t(from), t.shape.begin() + int64_t(to));
  v.strides.assign(t.strides.begin() + int64_t(from), t.strides.begin() + int64_t(to));
  if (!keep_offset) v.offset = 0;
  return v;
}

void layer_norm_backward_kernel(const KernelCall& c) {
  const Tensor& g = *c.in[0];
  const Tensor& x = *c.in[1];
  const Tensor& out = *c.out;
  const OpArgs& args = *c.args;
  const size_t nd = out.shape.size(), k = size_t(args.norm_ndim);
  const Tensor gc = dims_view(g, nd - k, nd, false), xc = dims_view(x, nd - k, nd, false),
               oc = dims_view(out, nd - k, nd, false);
  std::vector<Layout> cols;
  for_each_layout({&gc, &xc, &oc}, [&](const Layout& L) { cols.push_back(L); });
  if (cols.size() != 1) {
    // A row's dims do not merge into BM_MAX_DIMS: run on dense copies (they always merge to one).
    TensorPtr gd = contiguous(std::make_shared<Tensor>(g)), xd = contiguous(std::make_shared<Tensor>(x));
    TensorPtr od = empty_tensor(out.shape, out.dtype, out.device());
    KernelCall dense = c;
    dense.in[0] = gd.get();
    dense.in[1] = xd.get();
    dense.out = od.get();
    layer_norm_backward_kernel(dense);
    copy_into(std::make_shared<Tensor>(out), od);
    return;
  }
  const Layout& C = cols[0];
  const Tensor* w = args.norm_weight ? c.in[2] : &x;  // unused bindings get a placeholder
  MetalBackend& be = backend_of(out);
  const std::vector<MetalBackend::Binding> bind{{&g, 0}, {&x, 1}, {w, 2}, {&out, 3}};
  const Tensor gr = dims_view(g, 0, nd - k, true), xr = dims_view(x, 0, nd - k, true),
               orows = dims_view(out, 0, nd - k, true);
  for_each_layout({&gr, &xr, &orows}, [&](const Layout& R) {
    LayerNormBackwardArgs a{};
    a.n_rows = R.numel;
    a.n_cols = C.numel;
    for (int t = 0; t < 3; ++t) {
      a.offset[t] = R.offset[size_t(t)];
      for (int d = 0; d < R.ndim; ++d) a.row_strides[t][d] = R.strides[size_t(t)][d];
      for (int d = 0; d < C.ndim; ++d) a.col_strides[t][d] = C.strides[size_t(t)][d];
    }
    a.w_offset = w->offset;
    a.eps = float(args.norm_eps);
    a.has_weight = args.norm_weight;
    a.row_ndim = R.ndim;
    for (int d = 0; d < R.ndim; ++d) a.row_shape[d] = R.shape[d];
    a.col_ndim = C.ndim;
    for (int d = 0; d < C.ndim; ++d) a.col_shape[d] = C.shape[d];
    if (a.n_cols <= kSerialMax) {
      be.dispatch(kernel_name("layer_norm_backward_thread", out.dtype), bind, &a, sizeof(a), 4,
                  Size3{uint64_t(a.n_rows), 1, 1}, group_1d(a.n_rows));
    } else {
      const uint64_t threads = uint64_t(std::min<int64_t>(256, (a.n_cols + 31) / 32 * 32));
      be.dispatch_groups(kernel_name("layer_norm_backward_group", out.dtype), bind, &a, sizeof(a), 4,
                         Size3{uint64_t(a.n_rows), 1, 1}, Size3{threads, 1, 1});
    }
  });
}

// out = (g * a + (x - mean) * k) + c (training) or g * a, every operand with any strides.
void batch_norm_backward_kernel(const KernelCall& c) {
  MetalBackend& be = backend_of(*c.out);
  const std::string name = kernel_name("batch_norm_backward", c.out->dtype);
  const std::vector<MetalBackend::Binding> bind{{c.in[0], 0}, {c.in[1], 1}, {c.in[2], 2}, {c.out, 3}};
  for_each_layout({c.out, c.in[0], c.in[1], c.in[2]}, [&](const Layout& L) {
    ElementwiseArgs a{};
    set_layout(L, &a);
    a.flags = c.args->norm_training ? 1 : 0;
    be.dispatch(name, bind, &a, sizeof(a), 4, Size3{uint64_t(L.numel), 1, 1}, group_1d(L.numel));
  });
}

}  // namespace

void register_norm_backward_kernels(MetalBackend& b) {
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32}) {
    b.set_kernel(OpId::layer_norm_backward, d, &layer_norm_backward_kernel);
    b.set_kernel(OpId::batch_norm_backward, d, &batch_norm_backward_kernel);
  }
}

}  // namespace bm::metal
