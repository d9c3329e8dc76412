// index_select, index_copy, index_add and nonzero on Metal (shaders/index.metal), any strides.
//
// The row kernels launch one thread per element they write. Operands are laid out over a common
// shape: the tensors read or written along the row dim are viewed with stride 0 there (the
// kernel adds row * row_stride itself), and a "row number" operand with stride 1 along the row dim
// tells each thread which row it is on; for_each_layout merges all of them together (it reads
// only shapes, strides and offsets, so the row-number operand needs no memory).
#include <algorithm>

#include "metal/kernels.h"

namespace bm::metal {

namespace {

// t viewed over `shape` (t's shape with the row dim resized) with stride 0 along the row dim.
Tensor rows_at_zero(const Tensor& t, const Shape& shape, int64_t dim) {
  Tensor v = t;
  v.shape = shape;
  v.strides[size_t(dim)] = 0;
  return v;
}

// The row-number operand over `shape`: stride 1 along dim, 0 elsewhere.
Tensor row_number(const Shape& shape, int64_t dim) {
  Tensor v;
  v.shape = shape;
  v.strides.assign(shape.size(), 0);
  v.strides[size_t(dim)] = 1;
  return v;
}

// dst row dmap[k] (or k) := src row smap[k] for the rows of `shape` along dim.
void launch_rows(const Tensor& src, Tensor& dst, const Tensor& smap, int64_t smap_offset, int64_t smap_stride,
                 const Tensor* dmap, int64_t dmap_offset, int64_t dmap_stride, const Shape& shape, int64_t dim) {
  MetalBackend& be = backend_of(dst);
  const std::string name = kernel_name("index_rows", dst.dtype) + "_" + dtype_name(smap.dtype);
  const Tensor dv = rows_at_zero(dst, shape, dim), sv = rows_at_zero(src, shape, dim), k = row_number(shape, dim);
  for_each_layout({&dv, &sv, &k}, [&](const Layout& L) {
    IndexRowsArgs a{};
    set_layout(L, &a);
    a.src_row_stride = src.strides[size_t(dim)];
    a.dst_row_stride = dst.strides[size_t(dim)];
    a.src_rows = src.shape[size_t(dim)];
    a.dst_rows = dst.shape[size_t(dim)];
    a.smap_offset = smap_offset;
    a.smap_stride = smap_stride;
    a.has_dmap = dmap != nullptr;
    a.dmap_offset = dmap_offset;
    a.dmap_stride = dmap_stride;
    be.dispatch(name, {{&src, 0}, {&dst, 1}, {&smap, 2}, {dmap ? dmap : &smap, 3}}, &a, sizeof(a), 4,
                Size3{uint64_t(L.numel), 1, 1}, group_1d(L.numel));
  });
}

void index_select_kernel(const KernelCall& c) {
  const Tensor &x = *c.in[0], &idx = *c.in[1];
  Tensor& out = *c.out;
  launch_rows(x, out, idx, idx.offset, idx.strides[0], nullptr, 0, 0, out.shape, c.args->index_dim);
}

// pairs (2, n) int64: target rows, then source rows.
void index_copy_kernel(const KernelCall& c) {
  const Tensor &src = *c.in[0], &pairs = *c.in[1];
  Tensor& out = *c.out;
  const int64_t dim = c.args->index_dim, n = pairs.shape[1];
  Shape shape = out.shape;
  shape[size_t(dim)] = n;
  launch_rows(src, out, pairs, pairs.offset + pairs.strides[0], pairs.strides[1], &pairs, pairs.offset,
              pairs.strides[1], shape, dim);
}

void index_add_kernel(const KernelCall& c) {
  const Tensor &base = *c.in[0], &src = *c.in[1], &csr = *c.in[2];
  Tensor& out = *c.out;
  const int64_t dim = c.args->index_dim;
  MetalBackend& be = backend_of(out);
  const Tensor sv = rows_at_zero(src, out.shape, dim), p = row_number(out.shape, dim);
  for_each_layout({&out, &base, &sv, &p}, [&](const Layout& L) {
    IndexAddArgs a{};
    set_layout(L, &a);
    a.src_row_stride = src.strides[size_t(dim)];
    a.rows = out.shape[size_t(dim)];
    a.csr_offset = csr.offset;
    be.dispatch(kernel_name("index_add", out.dtype), {{&base, 0}, {&src, 1}, {&csr, 2}, {&out, 3}}, &a, sizeof(a), 4,
                Size3{uint64_t(L.numel), 1, 1}, group_1d(L.numel));
  });
}

// Chunks of at least 256 elements, at most 65536 chunks (the scan is one thread's loop).
void nonzero_kernel(const KernelCall& c) {
  const Tensor& x = *c.in[0];
  Tensor& out = *c.out;
  MetalBackend& be = backend_of(out);
  NonzeroArgs a{};
  a.numel = x.numel();
  a.chunk = std::max<int64_t>(256, (a.numel + 65535) / 65536);
  a.n_chunks = (a.numel + a.chunk - 1) / a.chunk;
  a.in_offset = x.offset;
  a.out_offset = out.offset;
  a.out_row_stride = out.strides[0];
  a.out_col_stride = out.strides[1];
  a.n_out = out.shape[0];
  a.ndim = int(x.ndim());  // the op layer sends at most BM_MAX_DIMS dims
  for (int d = 0; d < a.ndim; ++d) {
    a.shape[d] = x.shape[size_t(d)];
    a.strides[d] = x.strides[size_t(d)];
  }
  TensorPtr counts = empty_tensor({a.n_chunks}, DType::Int64, out.device());
  const Size3 grid{uint64_t(a.n_chunks), 1, 1};
  be.dispatch(kernel_name("nonzero_count", x.dtype), {{&x, 0}, {counts.get(), 1}}, &a, sizeof(a), 2, grid,
              group_1d(a.n_chunks));
  be.dispatch("nonzero_scan", {{counts.get(), 0}}, &a, sizeof(a), 1, Size3{1, 1, 1}, Size3{1, 1, 1});
  be.dispatch(kernel_name("nonzero_write", x.dtype), {{&x, 0}, {counts.get(), 1}, {&out, 2}}, &a, sizeof(a), 3, grid,
              group_1d(a.n_chunks));
}

}  // namespace

void register_index_kernels(MetalBackend& b) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType d = DType(i);
    if (d == DType::Float64) continue;  // Metal has no double
    if (op_row(OpId::index_select).dtypes & bit(d)) b.set_kernel(OpId::index_select, d, &index_select_kernel);
    if (op_row(OpId::index_copy).dtypes & bit(d)) b.set_kernel(OpId::index_copy, d, &index_copy_kernel);
    if (op_row(OpId::index_add).dtypes & bit(d)) b.set_kernel(OpId::index_add, d, &index_add_kernel);
    if (op_row(OpId::nonzero).dtypes & bit(d)) b.set_kernel(OpId::nonzero, d, &nonzero_kernel);
  }
}

}  // namespace bm::metal
