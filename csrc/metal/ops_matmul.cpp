// matmul on Metal (shaders/matmul.metal). The op layer hands over a (B..., M, K) and b (B..., K, N)
// with equal batch shapes and any strides (broadcast batch dims have zero strides), out (B..., M, N),
// K > 0 and out non-empty. The batch dims of the three operands are merged like any same-shape
// tensors (for_each_layout), so a typical batch is one launch whose groups span the entries in z.
#include <optional>

#include "core/errors.h"
#include "metal/kernels.h"

namespace bm::metal {

namespace {

constexpr int64_t kTile = 32;             // MM_TILE in matmul.metal: out tile per threadgroup
constexpr uint64_t kThreadsPerSide = 8;   // MM_T: the threadgroup is kThreadsPerSide^2 threads

// The batch part of t: a view of its first nb dims (offset kept), for merging batch dims.
Tensor batch_view(const Tensor& t, int nb) {
  Tensor v;
  v.offset = t.offset;
  v.shape.assign(t.shape.begin(), t.shape.begin() + nb);
  v.strides.assign(t.strides.begin(), t.strides.begin() + nb);
  return v;
}

// A row stride that walks batch entries and rows in one go (entry e, row i at (e * M + i) * rs), if
// the batch stride allows one.
std::optional<int64_t> folded_row_stride(int64_t batch_stride, int64_t rs, int64_t M) {
  if (M == 1) return batch_stride;
  if (batch_stride == M * rs) return rs;
  return std::nullopt;
}

void matmul_kernel(const KernelCall& c) {
  const Tensor &a = *c.in[0], &b = *c.in[1];
  Tensor& out = *c.out;
  const int nb = int(out.ndim()) - 2;
  MatmulArgs base{};
  base.M = a.shape[nb];
  base.K = a.shape[nb + 1];
  base.N = b.shape[nb + 1];
  base.a_rs = a.strides[nb];
  base.a_cs = a.strides[nb + 1];
  base.b_rs = b.strides[nb];
  base.b_cs = b.strides[nb + 1];
  base.out_rs = out.strides[nb];
  base.out_cs = out.strides[nb + 1];
  // Tile loads walk the operand's unit-stride dim: K for a row-major a, N for a row-major b.
  base.a_k_fast = !(base.a_rs == 1 && base.a_cs != 1);
  base.b_k_fast = base.b_rs == 1 && base.b_cs != 1;

  MetalBackend& be = backend_of(out);
  const std::string name = kernel_name("matmul", out.dtype);
  Tensor bo = batch_view(out, nb), ba = batch_view(a, nb), bb = batch_view(b, nb);
  for_each_layout({&bo, &ba, &bb}, [&](const Layout& L) {
    MatmulArgs m = base;
    m.out_offset = L.offset[0];
    m.a_offset = L.offset[1];
    m.b_offset = L.offset[2];
    m.batch_ndim = L.ndim;
    for (int d = 0; d < L.ndim; ++d) {
      m.batch_shape[d] = L.shape[d];
      m.out_bstrides[d] = L.strides[0][d];
      m.a_bstrides[d] = L.strides[1][d];
      m.b_bstrides[d] = L.strides[2][d];
    }
    int64_t count = L.numel;
    // b shared by every entry (nn.Linear on (B, T, C)): when a's and out's rows walk the batch with
    // one stride, the batch is a single (count * M) x K product, which fills tiles better.
    if (L.ndim == 1 && m.b_bstrides[0] == 0) {
      auto ars = folded_row_stride(m.a_bstrides[0], m.a_rs, m.M);
      auto ors = folded_row_stride(m.out_bstrides[0], m.out_rs, m.M);
      if (ars && ors) {
        m.M *= count;
        m.a_rs = *ars;
        m.out_rs = *ors;
        m.a_k_fast = !(m.a_rs == 1 && m.a_cs != 1);
        m.batch_ndim = 0;
        count = 1;
      }
    }
    Size3 groups{uint64_t((m.N + kTile - 1) / kTile), uint64_t((m.M + kTile - 1) / kTile), uint64_t(count)};
    be.dispatch_groups(name, {{&a, 0}, {&b, 1}, {&out, 2}}, &m, sizeof(m), 3, groups,
                       Size3{kThreadsPerSide, kThreadsPerSide, 1});
  });
}

}  // namespace

void register_matmul_kernels(MetalBackend& b) {
  for (DType d : {DType::Float32, DType::Float16, DType::BFloat16, DType::Int8, DType::UInt8, DType::Int16, DType::Int32, DType::Int64})
    b.set_kernel(OpId::matmul, d, &matmul_kernel);  // the row's mask minus float64 (none on Metal)
}

}  // namespace bm::metal
