// cumsum, cumprod, argsort rows and the compositions over them (sort, topk, median, unique).
#include "core/ops_scan.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "autograd/node.h"
#include "core/errors.h"
#include "core/ops_index.h"

namespace bm {

namespace {

std::string tag(const char* op) { return std::string("[") + op + "] "; }

TensorPtr scan(OpId op, const TensorPtr& t, int64_t dim, std::optional<DType> dtype) {
  OpArgs a;
  a.dim = dim;
  return run_op(op, {dtype ? cast(t, *dtype) : t}, a);
}

TensorPtr int_tensor(const std::vector<int64_t>& v, Device* dev) {
  return from_host(v.data(), {int64_t(v.size())}, {int64_t(sizeof(int64_t))}, DType::Int64, dev);
}

}  // namespace

TensorPtr cumsum(const TensorPtr& t, int64_t dim, std::optional<DType> dtype) { return scan(OpId::cumsum, t, dim, dtype); }
TensorPtr cumprod(const TensorPtr& t, int64_t dim, std::optional<DType> dtype) {
  return scan(OpId::cumprod, t, dim, dtype);
}

TensorPtr argsort(const TensorPtr& t, int64_t dim, bool descending) {
  OpArgs a;
  a.dim = dim;
  a.descending = descending;
  return run_op(OpId::argsort, {t}, a);
}

TensorPtr take_along_dim(const TensorPtr& t, const TensorPtr& index, int64_t dim) {
  const char* op = "take_along_dim";
  if (t->ndim() == 0 && index->ndim() == 0)
    return reshape(take_along_dim(reshape(t, {1}), reshape(index, {1}), 0), {});
  const int64_t nd = t->ndim();
  dim = normalize_dim(op, dim, nd);
  bool ok = index->ndim() == nd;
  for (int64_t e = 0; ok && e < nd; ++e) ok = e == dim || index->shape[size_t(e)] == t->shape[size_t(e)];
  if (!ok)
    throw ValueError(tag(op) + "index of shape " + shape_str(index->shape) + " does not match input of shape " +
                     shape_str(t->shape) + " outside dim " + std::to_string(dim));
  if (index->numel() == 0)  // an empty view of t, so the result still belongs to t's graph
    return reshape(slice(reshape(t, {-1}), 0, 0, 0, 1), Dims(index->shape.begin(), index->shape.end()));
  // Linear positions into the contiguous (row-major) order of t: index * stride(dim) plus each
  // other dim's coordinate times its stride; then rows of the flattened t (differentiable).
  const Shape cs = contiguous_strides(t->shape);
  TensorPtr lin = binary(OpId::mul, cast(index, DType::Int64), Scalar::from_int(cs[size_t(dim)]));
  for (int64_t e = 0; e < nd; ++e) {
    if (e == dim || index->shape[size_t(e)] == 1) continue;
    Dims sh(size_t(nd), 1);
    sh[size_t(e)] = index->shape[size_t(e)];
    TensorPtr coord = reshape(arange(Scalar::from_int(0), Scalar::from_int(index->shape[size_t(e)]), Scalar::from_int(1),
                                     DType::Int64, t->device()),
                              sh);
    lin = binary(OpId::add, lin, binary(OpId::mul, coord, Scalar::from_int(cs[size_t(e)])));
  }
  TensorPtr out = index_select(reshape(t, {-1}), 0, reshape(lin, {-1}));
  return reshape(out, Dims(index->shape.begin(), index->shape.end()));
}

std::pair<TensorPtr, TensorPtr> sort(const TensorPtr& t, int64_t dim, bool descending) {
  TensorPtr idx = argsort(t, dim, descending);
  return {take_along_dim(t, idx, dim), idx};
}

std::pair<TensorPtr, TensorPtr> topk(const TensorPtr& t, int64_t k, int64_t dim, bool largest) {
  const int64_t d = normalize_dim("topk", dim, t->ndim());
  const int64_t size = t->ndim() == 0 ? 1 : t->shape[size_t(d)];
  if (k < 0 || k > size)
    throw IndexError("[topk] k (" + std::to_string(k) + ") is out of range for dim " + std::to_string(dim) +
                     " of size " + std::to_string(size));
  // A 0-d input gives itself for k = 0 and 1 alike, as torch does.
  if (t->ndim() == 0) return {clone(t), argsort(t, 0, largest)};
  TensorPtr idx = slice(argsort(t, d, largest), d, 0, k, 1);
  return {take_along_dim(t, idx, d), contiguous(idx)};
}

std::pair<TensorPtr, TensorPtr> median_dim(const TensorPtr& t, int64_t dim, bool keepdim) {
  const int64_t d = normalize_dim("median", dim, t->ndim());
  const int64_t n = t->ndim() == 0 ? 1 : t->shape[size_t(d)];
  if (n == 0)
    throw IndexError("[median] cannot take the median over dim " + std::to_string(dim) + " of size 0 (input shape " +
                     shape_str(t->shape) + ")");
  if (t->ndim() == 0) return {clone(t), argsort(t, 0, false)};
  TensorPtr order = argsort(t, d, false);  // NaN last, in input order
  Shape keep = t->shape;
  keep[size_t(d)] = 1;
  TensorPtr pos = full(keep, Scalar::from_int((n - 1) / 2), DType::Int64, t->device());
  if (is_floating(t->dtype)) {
    // A row with NaN: its median is NaN, the first NaN (in input order) is its index, as torch.
    TensorPtr nan_count = reduce(OpId::sum, binary(OpId::ne, t, t), {d}, true);
    pos = where(binary(OpId::gt, nan_count, Scalar::from_int(0)),
                binary(OpId::sub, Scalar::from_int(n), nan_count), pos);
  }
  TensorPtr idx = take_along_dim(order, pos, d);
  TensorPtr vals = take_along_dim(t, idx, d);
  if (!keepdim) {
    vals = squeeze(vals, Dims{d});
    idx = squeeze(idx, Dims{d});
  }
  return {vals, idx};
}

TensorPtr median(const TensorPtr& t) {
  if (t->numel() == 0) {
    if (!is_floating(t->dtype))
      throw ValueError("[median] the median of an empty " + std::string(dtype_name(t->dtype)) + " tensor is undefined");
    return full({}, Scalar::from_double(NAN), t->dtype, t->device());
  }
  return median_dim(reshape(t, {-1}), 0, false).first;
}

namespace {

// Host keys: bool as int, half types as float; NaN sorts last and is unequal to everything.
template <typename T>
using host_key_t = std::conditional_t<std::is_same_v<T, bool>, int, acc_t<T>>;

template <typename K>
bool host_less(K a, K b) {
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// Groups rows of a (n, m) row-major host array: rows are sorted lexicographically (stable) and
// neighbours with equal elements share a group. Fills each group's first row, each row's group
// and each group's size.
template <typename T>
void group_rows(const T* x, int64_t n, int64_t m, std::vector<int64_t>& rep, std::vector<int64_t>& inverse,
                std::vector<int64_t>& counts) {
  using K = host_key_t<T>;
  auto key = [&](int64_t r, int64_t c) { return K(x[r * m + c]); };
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    for (int64_t c = 0; c < m; ++c) {
      K ka = key(a, c), kb = key(b, c);
      if (host_less(ka, kb)) return true;
      if (host_less(kb, ka)) return false;
    }
    return false;
  });
  inverse.assign(size_t(n), 0);
  for (int64_t i = 0; i < n; ++i) {
    bool same = i > 0;
    for (int64_t c = 0; same && c < m; ++c) same = key(perm[size_t(i)], c) == key(perm[size_t(i - 1)], c);
    if (!same) {
      rep.push_back(perm[size_t(i)]);
      counts.push_back(0);
    }
    inverse[size_t(perm[size_t(i)])] = int64_t(rep.size()) - 1;
    counts.back()++;
  }
}

}  // namespace

std::tuple<TensorPtr, TensorPtr, TensorPtr> unique(const TensorPtr& t_in, bool return_inverse, bool return_counts,
                                                   std::optional<int64_t> dim) {
  TensorPtr t = detach(t_in);  // not differentiable (torch's unique has no gradient either)
  Device* dev = t->device();
  int64_t d = 0;
  TensorPtr rows;  // (n, m): the things to make unique, one per row
  if (dim) {
    d = normalize_dim("unique", *dim, t->ndim());
    if (t->ndim() == 0) throw IndexError("[unique] dim " + std::to_string(*dim) + " given for a 0-d tensor");
    TensorPtr front = transpose(t, 0, d);
    const int64_t n = t->shape[size_t(d)];
    const int64_t m = n == 0 ? 0 : t->numel() / n;
    rows = reshape(contiguous(front), {n, m});
  } else {
    rows = reshape(t, {-1, 1});
  }
  // Explicit copy to the host (a device tensor waits for its queue here).
  TensorPtr host = contiguous(to_device(rows, cpu_device()));
  wait_readable(*host);
  std::vector<int64_t> rep, inverse, counts;
  visit_dtype(host->dtype, [&](auto v) {
    using T = decltype(v);
    group_rows<T>(host->data<T>(), host->shape[0], host->shape[1], rep, inverse, counts);
  });
  TensorPtr values = dim ? index_select(t, d, int_tensor(rep, dev)) : index_select(reshape(t, {-1}), 0, int_tensor(rep, dev));
  TensorPtr inv, cnt;
  if (return_inverse) {
    inv = int_tensor(inverse, dev);
    if (!dim) inv = reshape(inv, Dims(t->shape.begin(), t->shape.end()));
  }
  if (return_counts) cnt = int_tensor(counts, dev);
  return {values, inv, cnt};
}

}  // namespace bm
