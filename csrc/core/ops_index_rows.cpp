// index_select, index_add, index_copy_, nonzero: checks (devices, dtypes, shapes, index values on
// the host) in front of their rows, and the host-side preparation of index_add's per-row lists
// and index_copy_'s deduplicated writes.
#include <algorithm>
#include <numeric>
#include <string>

#include "core/errors.h"
#include "core/ops_index.h"
#include "autograd/record.h"
#include "core/ops_math.h"
#include "core/memory.h"

namespace bm {

namespace {

std::string tag(const char* op) { return std::string("[") + op + "] "; }

bool is_index_dtype(DType d) { return d == DType::Int32 || d == DType::Int64; }

template <typename I>
void read_values(const Tensor& t, std::vector<int64_t>& out) {
  const I* base = t.data<I>();
  const int64_t nd = t.ndim();
  std::vector<int64_t> idx(size_t(nd), 0);
  int64_t pos = 0;
  for (int64_t count = t.numel(); count > 0; --count) {
    out.push_back(int64_t(base[pos]));
    for (int64_t d = nd - 1; d >= 0; --d) {  // odometer step to the next logical element
      pos += t.strides[size_t(d)];
      if (++idx[size_t(d)] < t.shape[size_t(d)]) break;
      pos -= t.strides[size_t(d)] * t.shape[size_t(d)];
      idx[size_t(d)] = 0;
    }
  }
}

// Device, index dtype and index shape checks shared by the three row ops; `others` are the other
// tensor arguments, named, checked for device together with the index.
void check_index_arg(const char* op, const std::vector<std::pair<const char*, const Tensor*>>& named,
                     const Tensor& index) {
  check_same_device(op, named);
  if (!is_index_dtype(index.dtype))
    throw IndexError(tag(op) + "expected an int32 or int64 index, got " + dtype_name(index.dtype));
}

void check_index_shape(const char* op, const Tensor& index) {
  if (index.ndim() > 1)
    throw IndexError(tag(op) + "index must be a 0-d or 1-D tensor, got shape " + shape_str(index.shape));
}

// Index values, each checked to lie in [0, size).
std::vector<int64_t> checked_values(const char* op, const Tensor& index, int64_t dim, int64_t size) {
  std::vector<int64_t> v = index_values_on_host(index);
  for (int64_t x : v)
    if (x < 0 || x >= size)
      throw IndexError(tag(op) + "index " + std::to_string(x) + " is out of range for dimension " +
                       std::to_string(dim) + " with size " + std::to_string(size) + " (expected in [0, " +
                       std::to_string(size) + "))");
  return v;
}

// A 0-d tensor is worked on as shape (1,).
TensorPtr as_1d_if_0d(const TensorPtr& t) { return t->ndim() == 0 ? reshape(t, {1}) : t; }

// src must be shaped like `t` except along dim, where it has n entries.
void check_src_shape(const char* op, const Tensor& t, int64_t dim, const Tensor& src, int64_t n) {
  Shape want = t.shape;
  if (!want.empty()) want[size_t(dim)] = n;
  Shape got = src.ndim() == 0 && t.ndim() == 1 && n == 1 ? Shape{1} : src.shape;
  if (got != want)
    throw ValueError(tag(op) + "source of shape " + shape_str(src.shape) + " does not match self of shape " +
                     shape_str(t.shape) + " with " + std::to_string(n) + " indices along dim " + std::to_string(dim) +
                     " (expected " + shape_str(want) + ")");
}

TensorPtr upload(const std::vector<int64_t>& v, const Shape& shape, Device* dev) {
  Shape st = contiguous_strides(shape);
  for (int64_t& s : st) s *= int64_t(sizeof(int64_t));
  return from_host(v.data(), shape, st, DType::Int64, dev);
}

// Above this many dims nonzero works on the flattened tensor (the kernels take up to 8 dims).
constexpr int64_t kNonzeroMaxDims = 8;

}  // namespace

std::vector<int64_t> index_values_on_host(const Tensor& t) {
  std::vector<int64_t> v;
  if (t.numel() == 0) return v;
  wait_readable(t);
  v.reserve(size_t(t.numel()));
  if (t.dtype == DType::Int32) read_values<int32_t>(t, v);
  else if (t.dtype == DType::Int64) read_values<int64_t>(t, v);
  else throw TypeError(std::string("[index] expected an int32 or int64 tensor, got ") + dtype_name(t.dtype));
  return v;
}

TensorPtr index_select(const TensorPtr& x, int64_t dim, const TensorPtr& index) {
  OpScope scope("index_select");  // named by OutOfMemoryError
  const char* op = "index_select";
  check_index_arg(op, {{"input", x.get()}, {"index", index.get()}}, *index);
  check_dtype_supported(OpId::index_select, x->dtype, x->device());
  check_index_shape(op, *index);
  TensorPtr xd = as_1d_if_0d(x);
  dim = normalize_dim(op, dim, xd->ndim());
  if (x->ndim() == 0 && index->numel() != 1)
    throw ValueError(tag(op) + "an index into a 0-d tensor must have exactly 1 value, got " +
                     std::to_string(index->numel()));
  checked_values(op, *index, dim, xd->shape[size_t(dim)]);
  Shape s = xd->shape;
  s[size_t(dim)] = index->numel();
  TensorPtr out = empty_tensor(s, x->dtype, x->device());
  OpArgs a;
  a.out_dtype = x->dtype;
  a.index_dim = dim;
  run_op_into(OpId::index_select, {xd, as_1d_if_0d(index)}, a, out);
  TensorPtr result = x->ndim() == 0 ? reshape(out, {}) : out;
  if (should_record({&x})) {
    // d/dx: the gradient's rows added back into the rows they came from (duplicates accumulate).
    record_saved_fn("IndexSelectBackward0", {x}, result, {as_1d_if_0d(index)},
                    [xs = xd->shape, x0 = x->ndim() == 0, dim, gs = out->shape](
                        const TensorPtr& g, const std::vector<TensorPtr>& s, const std::vector<bool>&) {
      TensorPtr zeros = full(xs, Scalar::from_int(0), g->dtype, g->device());
      TensorPtr gx = index_add(zeros, dim, s[0], reshape(g, Dims(gs.begin(), gs.end())));
      return std::vector<TensorPtr>{x0 ? reshape(gx, {}) : gx};
    });
  }
  return result;
}

TensorPtr index_add(const TensorPtr& base, int64_t dim, const TensorPtr& index, const TensorPtr& src) {
  OpScope scope("index_add");  // named by OutOfMemoryError
  const char* op = "index_add";
  check_index_arg(op, {{"self", base.get()}, {"index", index.get()}, {"source", src.get()}}, *index);
  check_dtype_supported(OpId::index_add, base->dtype, base->device());
  if (src->dtype != base->dtype)
    throw TypeError(tag(op) + "self (" + dtype_name(base->dtype) + ") and source (" + dtype_name(src->dtype) +
                    ") must have the same dtype");
  check_index_shape(op, *index);
  TensorPtr bd = as_1d_if_0d(base);
  dim = normalize_dim(op, dim, bd->ndim());
  const int64_t n = index->numel(), rows = bd->shape[size_t(dim)];
  check_src_shape(op, *bd, dim, *src, n);
  std::vector<int64_t> v = checked_values(op, *index, dim, rows);
  // Per-row lists: row_ptr (rows + 1 entries), then the index positions sorted stably by row.
  std::vector<int64_t> csr(size_t(rows + 1 + n), 0);
  for (int64_t x : v) ++csr[size_t(x + 1)];
  for (int64_t r = 0; r < rows; ++r) csr[size_t(r + 1)] += csr[size_t(r)];
  std::vector<int64_t> fill(csr.begin(), csr.begin() + rows);
  for (int64_t k = 0; k < n; ++k) csr[size_t(rows + 1 + fill[size_t(v[size_t(k)])]++)] = k;
  TensorPtr out = empty_tensor(bd->shape, base->dtype, base->device());
  OpArgs a;
  a.out_dtype = base->dtype;
  a.index_dim = dim;
  TensorPtr sd = src->ndim() == 0 ? reshape(src, {1}) : src;
  run_op_into(OpId::index_add, {bd, sd, upload(csr, {rows + 1 + n}, base->device())}, a, out);
  TensorPtr result = base->ndim() == 0 ? reshape(out, {}) : out;
  if (should_record({&base, &src})) {
    // d/dbase: the gradient; d/dsource: the gradient's rows the index names.
    record_saved_fn("IndexAddBackward0", {base, src}, result, {as_1d_if_0d(index)},
                    [dim, ss = src->shape, bs = bd->shape](const TensorPtr& g, const std::vector<TensorPtr>& s,
                                                          const std::vector<bool>& need) {
      TensorPtr gs = need[1] ? reshape(index_select(reshape(g, Dims(bs.begin(), bs.end())), dim, s[0]),
                                       Dims(ss.begin(), ss.end()))
                             : nullptr;
      return std::vector<TensorPtr>{g, gs};
    });
  }
  return result;
}

void index_copy_(const TensorPtr& t, int64_t dim, const TensorPtr& index, const TensorPtr& src) {
  OpScope scope("index_copy_");  // named by OutOfMemoryError
  const char* op = "index_copy";
  check_index_arg(op, {{"self", t.get()}, {"index", index.get()}, {"source", src.get()}}, *index);
  check_writable("index_copy_", *t);
  check_dtype_supported(OpId::index_copy, t->dtype, t->device());
  if (src->dtype != t->dtype)
    throw TypeError(tag(op) + "self (" + dtype_name(t->dtype) + ") and source (" + dtype_name(src->dtype) +
                    ") must have the same dtype");
  check_index_shape(op, *index);
  TensorPtr td = as_1d_if_0d(t);
  dim = normalize_dim(op, dim, td->ndim());
  const int64_t n = index->numel();
  check_src_shape(op, *td, dim, *src, n);
  std::vector<int64_t> v = checked_values(op, *index, dim, td->shape[size_t(dim)]);
  if (n == 0 || td->numel() == 0) return;
  // One write per target row: the last source row naming it, targets in increasing order.
  std::vector<int64_t> targets, sources;
  const int64_t rows = td->shape[size_t(dim)];
  bool increasing = true;
  for (int64_t k = 1; k < n && increasing; ++k) increasing = v[size_t(k)] > v[size_t(k - 1)];
  if (increasing) {  // masks and nonzero() give these: already unique
    targets = v;
    sources.resize(size_t(n));
    std::iota(sources.begin(), sources.end(), 0);
  } else if (rows <= 4 * n + 4096) {  // a last-writer table over the rows
    std::vector<int64_t> last(size_t(rows), -1);
    for (int64_t k = 0; k < n; ++k) last[size_t(v[size_t(k)])] = k;
    for (int64_t r = 0; r < rows; ++r)
      if (last[size_t(r)] >= 0) {
        targets.push_back(r);
        sources.push_back(last[size_t(r)]);
      }
  } else {  // few indices into many rows: a stable sort by target
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return v[size_t(a)] < v[size_t(b)]; });
    for (size_t k = 0; k < order.size(); ++k)
      if (k + 1 == order.size() || v[size_t(order[k + 1])] != v[size_t(order[k])]) {
        targets.push_back(v[size_t(order[k])]);
        sources.push_back(order[k]);
      }
  }
  const int64_t nu = int64_t(targets.size());
  targets.insert(targets.end(), sources.begin(), sources.end());
  OpArgs a;
  a.out_dtype = t->dtype;
  a.index_dim = dim;
  TensorPtr sd = src->ndim() == 0 ? reshape(src, {1}) : src;
  run_op_into(OpId::index_copy, {sd, upload(targets, {2, nu}, t->device())}, a, td);
}

TensorPtr nonzero(const TensorPtr& t) {
  OpScope scope("nonzero");  // named by OutOfMemoryError
  check_dtype_supported(OpId::nonzero, t->dtype, t->device());
  const int64_t nd = t->ndim();
  if (nd > kNonzeroMaxDims) {
    // Linear indices of the flattened tensor, split into coordinates with integer division.
    TensorPtr lin = select(nonzero(reshape(t, {-1})), 1, 0);
    std::vector<TensorPtr> cols;
    int64_t stride = t->numel() == 0 ? 1 : t->numel();
    for (int64_t d = 0; d < nd; ++d) {
      stride /= std::max<int64_t>(t->shape[size_t(d)], 1);
      cols.push_back(remainder(floor_divide(lin, Scalar::from_int(std::max<int64_t>(stride, 1))),
                               Scalar::from_int(std::max<int64_t>(t->shape[size_t(d)], 1))));
    }
    return stack(cols, 1);
  }
  TensorPtr count = reduce(OpId::sum, binary(OpId::ne, t, Scalar::from_int(0)), {}, false);
  wait_readable(*count);
  const int64_t n = *count->data<int64_t>();
  TensorPtr out = empty_tensor({n, nd}, DType::Int64, t->device());
  if (n == 0 || nd == 0) return out;
  OpArgs a;
  run_op_into(OpId::nonzero, {t}, a, out);
  return out;
}

}  // namespace bm
