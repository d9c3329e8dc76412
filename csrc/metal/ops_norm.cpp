// layer_norm and batch_norm on Metal (shaders/norm.metal). The op layer (core/ops_nn_norm.cpp) has
// checked everything; weight and bias arrive dense, batch_norm's scale/shift as float32 per-channel
// values viewed with zero strides over the input's shape.
#include <algorithm>

#include "core/ops.h"
#include "metal/kernels.h"
#include "metal/reduce_plan.h"

namespace bm::metal {

namespace {

// Rows at most this long run one thread per row (no barriers, no collectives).
constexpr int64_t kSerialMax = 32;

// Dims [from, to) of in/out in logical order, size-1 dims dropped, neighbours merged when both
// tensors allow it (so a merged index still counts row-major in both).
std::vector<PlanDim> merged(const Tensor& in, const Tensor& out, size_t from, size_t to) {
  std::vector<PlanDim> v;
  for (size_t d = from; d < to; ++d) {
    const PlanDim p{in.shape[d], in.strides[d], out.strides[d]};
    if (p.size == 1) continue;
    if (!v.empty() && v.back().in_st == p.in_st * p.size && v.back().out_st == p.out_st * p.size) {
      v.back() = {v.back().size * p.size, p.in_st, p.out_st};
      continue;
    }
    v.push_back(p);
  }
  return v;
}

void layer_norm_kernel(const KernelCall& c) {
  const Tensor& out = *c.out;
  const OpArgs& args = *c.args;
  const size_t nd = out.shape.size(), k = size_t(args.norm_ndim);
  TensorPtr copied;  // keeps a dense copy alive when the input's row dims do not fit the shader
  const Tensor* x = c.in[0];
  std::vector<PlanDim> cols = merged(*x, out, nd - k, nd);
  if (cols.size() > BM_MAX_DIMS) {
    copied = contiguous(std::make_shared<Tensor>(*x));
    x = copied.get();
    cols = merged(*x, out, nd - k, nd);
  }
  const Tensor* w = args.norm_weight ? c.in[1] : x;  // unused bindings get a placeholder
  const Tensor* b = args.norm_bias ? c.in[args.norm_weight ? 2 : 1] : x;
  int64_t n_cols = 1;
  for (const PlanDim& d : cols) n_cols *= d.size;
  MetalBackend& be = backend_of(out);
  const std::vector<MetalBackend::Binding> bind{{x, 0}, {w, 1}, {b, 2}, {&out, 3}};
  for_each_outer(merged(*x, out, 0, nd - k), x->offset, out.offset,
                 [&](const std::vector<PlanDim>& rows, int64_t io, int64_t oo) {
    LayerNormArgs a{};
    a.n_cols = n_cols;
    a.in_offset = io;
    a.out_offset = oo;
    a.w_offset = w->offset;
    a.b_offset = b->offset;
    a.eps = float(args.norm_eps);
    a.has_weight = args.norm_weight;
    a.has_bias = args.norm_bias;
    a.row_ndim = int(rows.size());
    a.n_rows = 1;
    for (size_t d = 0; d < rows.size(); ++d) {
      a.row_shape[d] = rows[d].size;
      a.row_in_strides[d] = rows[d].in_st;
      a.row_out_strides[d] = rows[d].out_st;
      a.n_rows *= rows[d].size;
    }
    a.col_ndim = int(cols.size());
    for (size_t d = 0; d < cols.size(); ++d) {
      a.col_shape[d] = cols[d].size;
      a.col_in_strides[d] = cols[d].in_st;
      a.col_out_strides[d] = cols[d].out_st;
    }
    if (n_cols <= kSerialMax) {
      be.dispatch(kernel_name("layer_norm_thread", out.dtype), bind, &a, sizeof(a), 4, Size3{uint64_t(a.n_rows), 1, 1},
                  group_1d(a.n_rows));
    } else {
      const uint64_t threads = uint64_t(std::min<int64_t>(256, (n_cols + 31) / 32 * 32));
      be.dispatch_groups(kernel_name("layer_norm_group", out.dtype), bind, &a, sizeof(a), 4,
                         Size3{uint64_t(a.n_rows), 1, 1}, Size3{threads, 1, 1});
    }
  });
}

// out = x * scale + shift over one shape; every operand may have any strides.
void batch_norm_kernel(const KernelCall& c) {
  MetalBackend& be = backend_of(*c.out);
  const std::string name = kernel_name("batch_norm", c.out->dtype);
  const std::vector<MetalBackend::Binding> bind{{c.in[0], 0}, {c.in[1], 1}, {c.in[2], 2}, {c.out, 3}};
  for_each_layout({c.out, c.in[0], c.in[1], c.in[2]}, [&](const Layout& L) {
    ElementwiseArgs a{};
    set_layout(L, &a);
    be.dispatch(name, bind, &a, sizeof(a), 4, Size3{uint64_t(L.numel), 1, 1}, group_1d(L.numel));
  });
}

}  // namespace

void register_norm_kernels(MetalBackend& b) {
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32}) {
    b.set_kernel(OpId::layer_norm, d, &layer_norm_kernel);
    b.set_kernel(OpId::batch_norm, d, &batch_norm_kernel);
  }
}

}  // namespace bm::metal
