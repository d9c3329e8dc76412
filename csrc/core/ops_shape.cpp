// diagonal, flip, roll, tril / triu, gather, scatter, scatter_add, repeat_interleave's index:
// compositions of registry rows (see ops_shape.h for why and for the duplicate-index rules).
#include "core/ops_shape.h"

#include <algorithm>
#include <string>
#include <vector>

#include "autograd/record.h"
#include "core/errors.h"
#include "core/memory.h"
#include "core/ops_index.h"

namespace bm {

namespace {

std::string tag(const char* op) { return std::string("[") + op + "] "; }

// torch treats a 0-d tensor as shape (1,) in gather / scatter.
Shape nonempty(const Shape& s) { return s.empty() ? Shape{1} : s; }
Dims dims_of(const Shape& s) { return Dims(s.begin(), s.end()); }

TensorPtr upload_i64(const std::vector<int64_t>& v, Device* dev) {
  return from_host(v.data(), {int64_t(v.size())}, {int64_t(sizeof(int64_t))}, DType::Int64, dev);
}

// Checks in the dispatcher's order (devices, dtypes, shapes, then the index values, all before
// anything is written); normalises dim and returns the index values (row-major).
std::vector<int64_t> check_indexing(const char* op, const TensorPtr& self, int64_t& dim, const TensorPtr& index,
                                    const Tensor* src) {
  std::vector<std::pair<const char*, const Tensor*>> named{{"self", self.get()}, {"index", index.get()}};
  if (src) named.push_back({"src", src});
  check_same_device(op, named);
  if (index->dtype != DType::Int64 && index->dtype != DType::Int32)
    throw TypeError(tag(op) + "expected an int64 (or int32) index, got " + dtype_name(index->dtype));
  if (src && src->dtype != self->dtype)
    throw TypeError(tag(op) + "self (" + dtype_name(self->dtype) + ") and src (" + dtype_name(src->dtype) +
                    ") must have the same dtype");
  const Shape ss = nonempty(self->shape), is = nonempty(index->shape);
  const Shape rs = src ? nonempty(src->shape) : is;
  const int64_t nd = int64_t(ss.size());
  if (int64_t(is.size()) != nd || int64_t(rs.size()) != nd)
    throw ValueError(tag(op) + "index of shape " + shape_str(index->shape) + " must have as many dims as self (" +
                     shape_str(self->shape) + ")" + (src ? " and src (" + shape_str(src->shape) + ")" : std::string()));
  dim = normalize_dim(op, dim, nd);
  for (int64_t d = 0; d < nd; ++d) {
    const size_t k = size_t(d);
    if ((d != dim && is[k] > ss[k]) || is[k] > rs[k])
      throw ValueError(tag(op) + "index of shape " + shape_str(index->shape) + " is larger than self of shape " +
                       shape_str(self->shape) + (src ? " or src of shape " + shape_str(src->shape) : std::string()) +
                       " at dim " + std::to_string(d) + " (the index's size must be <= self's at every dim but dim " +
                       std::to_string(dim) + (src ? ", and <= src's at every dim)" : ")"));
  }
  std::vector<int64_t> v = index_values_on_host(*index);
  const int64_t size = ss[size_t(dim)];
  for (int64_t x : v)
    if (x < 0 || x >= size)
      throw IndexError(tag(op) + "index " + std::to_string(x) + " is out of bounds for dimension " +
                       std::to_string(dim) + " with size " + std::to_string(size));
  return v;
}

// For each element e of a tensor of shape `ishape` in row-major order: its linear position in a
// row-major tensor of shape `tshape`, with coordinate `dim` replaced by vals[e] when vals is given.
std::vector<int64_t> positions(const Shape& ishape, const Shape& tshape, int64_t dim, const std::vector<int64_t>* vals) {
  const int64_t n = shape_numel(ishape), nd = int64_t(ishape.size());
  std::vector<int64_t> out(static_cast<size_t>(n));
  if (n == 0) return out;
  const Shape cs = contiguous_strides(tshape);
  std::vector<int64_t> idx(size_t(nd), 0);
  int64_t cur = 0;  // the position without the dim-th coordinate when vals replaces it
  for (int64_t e = 0; e < n; ++e) {
    out[size_t(e)] = vals ? cur + (*vals)[size_t(e)] * cs[size_t(dim)] : cur;
    for (int64_t d = nd - 1; d >= 0; --d) {  // odometer step
      const size_t k = size_t(d);
      const int64_t step = (vals && d == dim) ? 0 : cs[k];
      cur += step;
      if (++idx[k] < ishape[k]) break;
      cur -= step * ishape[k];
      idx[k] = 0;
    }
  }
  return out;
}

// src's elements at the index's coordinates, flattened row-major (src may be larger than index).
TensorPtr src_values(const TensorPtr& src, const Shape& is, int64_t dim) {
  TensorPtr flat = reshape(src, {-1});
  if (nonempty(src->shape) == is) return flat;
  return index_select(flat, 0, upload_i64(positions(is, nonempty(src->shape), dim, nullptr), src->device()));
}

// An int64 0..n-1 permutation applied along dim with index_select (the index built on the host).
TensorPtr permute_rows(const TensorPtr& t, int64_t dim, const std::vector<int64_t>& order) {
  return index_select(t, dim, upload_i64(order, t->device()));
}

}  // namespace

TensorPtr diagonal(const TensorPtr& t, int64_t offset, int64_t dim1, int64_t dim2) {
  const char* op = "diagonal";
  const int64_t nd = t->ndim();
  if (nd < 2) throw ValueError(tag(op) + "expected a tensor with at least 2 dims, got " + std::to_string(nd));
  dim1 = normalize_dim(op, dim1, nd);
  dim2 = normalize_dim(op, dim2, nd);
  if (dim1 == dim2)
    throw ValueError(tag(op) + "dim1 and dim2 cannot be the same dim (both " + std::to_string(dim1) + ")");
  const int64_t s1 = t->shape[size_t(dim1)], s2 = t->shape[size_t(dim2)];
  const int64_t n = std::max<int64_t>(0, offset >= 0 ? std::min(s1, s2 - offset) : std::min(s1 + offset, s2));
  int64_t off = t->offset;
  if (n > 0) off += offset >= 0 ? offset * t->strides[size_t(dim2)] : -offset * t->strides[size_t(dim1)];
  Shape s, st;
  for (int64_t d = 0; d < nd; ++d)
    if (d != dim1 && d != dim2) {
      s.push_back(t->shape[size_t(d)]);
      st.push_back(t->strides[size_t(d)]);
    }
  s.push_back(n);
  st.push_back(t->strides[size_t(dim1)] + t->strides[size_t(dim2)]);
  TensorPtr v = make_view(t, s, st, off);
  v->view_base = t->view_base ? t->view_base : t;
  if (grad_enabled() && requires_grad(*t)) {
    // d/dt: zeros with the gradient written on the diagonal.
    record_fn("DiagonalBackward0", {t}, v, [geom = TensorGeometry{t->shape, t->dtype, t->device()}, offset, dim1,
                                             dim2](const TensorPtr& g) {
      return std::vector<TensorPtr>{
          view_scatter(g, geom, [=](const TensorPtr& z) { return diagonal(z, offset, dim1, dim2); })};
    });
  }
  return v;
}

TensorPtr flip(const TensorPtr& t, const Dims& dims) {
  OpScope scope("flip");
  const char* op = "flip";
  const int64_t nd = t->ndim();
  std::vector<bool> seen(size_t(std::max<int64_t>(nd, 1)), false);
  TensorPtr r = t;
  for (int64_t d0 : dims) {
    const int64_t d = normalize_dim(op, d0, nd);
    if (seen[size_t(d)]) throw ValueError(tag(op) + "dim " + std::to_string(d0) + " appears more than once in dims");
    seen[size_t(d)] = true;
    if (nd == 0 || t->shape[size_t(d)] < 2) continue;
    const int64_t n = t->shape[size_t(d)];
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[size_t(i)] = n - 1 - i;
    r = permute_rows(r, d, order);
  }
  return r == t ? clone(t) : r;  // always a new tensor, as torch
}

TensorPtr roll(const TensorPtr& t, const Dims& shifts, const Dims& dims) {
  OpScope scope("roll");
  const char* op = "roll";
  if (dims.empty()) {
    if (shifts.size() != 1)
      throw ValueError(tag(op) + "without dims, shifts must be a single number, got " + std::to_string(shifts.size()));
    return reshape(roll(reshape(t, {-1}), shifts, {0}), dims_of(t->shape));
  }
  if (shifts.size() != dims.size())
    throw ValueError(tag(op) + "shifts and dims must have the same length, got " + std::to_string(shifts.size()) +
                     " and " + std::to_string(dims.size()));
  const int64_t nd = t->ndim();
  if (nd == 0) throw IndexError(tag(op) + "a 0-d tensor has no dim to roll along; pass dims=None");
  TensorPtr r = t;
  for (size_t k = 0; k < dims.size(); ++k) {
    const int64_t d = normalize_dim(op, dims[k], nd);
    const int64_t n = t->shape[size_t(d)];
    if (n == 0) continue;
    const int64_t s = ((shifts[k] % n) + n) % n;
    if (s == 0) continue;
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[size_t(i)] = (i - s + n) % n;
    r = permute_rows(r, d, order);
  }
  return r == t ? clone(t) : r;
}

TensorPtr tril_triu(const TensorPtr& t, int64_t diag, bool upper) {
  OpScope scope(upper ? "triu" : "tril");
  const char* op = upper ? "triu" : "tril";
  if (t->ndim() < 2)
    throw ValueError(tag(op) + "expected a tensor with at least 2 dims, got " + std::to_string(t->ndim()));
  const int64_t rows = t->shape[size_t(t->ndim() - 2)], cols = t->shape[size_t(t->ndim() - 1)];
  Device* dev = t->device();
  TensorPtr r = reshape(arange(Scalar::from_int(0), Scalar::from_int(rows), Scalar::from_int(1), DType::Int64, dev),
                        {rows, 1});
  TensorPtr c = arange(Scalar::from_int(0), Scalar::from_int(cols), Scalar::from_int(1), DType::Int64, dev);
  TensorPtr k = binary(OpId::sub, c, r);  // col - row: the diagonal a position lies on
  TensorPtr keep = binary(upper ? OpId::ge : OpId::le, k, Scalar::from_int(diag));
  return where(keep, t, scalar_tensor(Scalar::from_int(0), t->dtype, dev));
}

TensorPtr gather(const TensorPtr& x, int64_t dim, const TensorPtr& index) {
  OpScope scope("gather");
  std::vector<int64_t> v = check_indexing("gather", x, dim, index, nullptr);
  std::vector<int64_t> pos = positions(nonempty(index->shape), nonempty(x->shape), dim, &v);
  TensorPtr out = index_select(reshape(x, {-1}), 0, upload_i64(pos, x->device()));
  return reshape(out, dims_of(index->shape));
}

TensorPtr scatter_add(const TensorPtr& self, int64_t dim, const TensorPtr& index, const TensorPtr& src) {
  OpScope scope("scatter_add");
  std::vector<int64_t> v = check_indexing("scatter_add", self, dim, index, src.get());
  const Shape is = nonempty(index->shape);
  std::vector<int64_t> pos = positions(is, nonempty(self->shape), dim, &v);
  // index_add adds each target's contributions in index order: deterministic on every backend.
  TensorPtr out = index_add(reshape(self, {-1}), 0, upload_i64(pos, self->device()), src_values(src, is, dim));
  return reshape(out, dims_of(self->shape));
}

TensorPtr scatter(const TensorPtr& self, int64_t dim, const TensorPtr& index, const Operand& src_in,
                  const std::string& reduce) {
  const char* op = "scatter";
  if (!reduce.empty() && reduce != "add") {
    if (reduce == "multiply")
      throw UnsupportedError(tag(op) + "reduce='multiply' is not supported; use reduce='add' or scatter_add");
    throw ValueError(tag(op) + "reduce must be 'add' or 'multiply', got '" + reduce + "'");
  }
  OpScope scope(op);
  const TensorPtr src_t = src_in.is_scalar() ? nullptr : src_in.t;
  std::vector<int64_t> v = check_indexing(op, self, dim, index, src_t.get());
  TensorPtr src = src_t ? src_t : full(index->shape, src_in.s, self->dtype, self->device());
  if (reduce == "add") return scatter_add(self, dim, index, src);
  const Shape is = nonempty(index->shape);
  TensorPtr out = empty_tensor(self->shape, self->dtype, self->device());
  {
    GradModeGuard off(false);
    copy_into(out, self);
    std::vector<int64_t> pos = positions(is, nonempty(self->shape), dim, &v);
    // index_copy_ keeps the last write of each target (in index order), as torch's CPU does.
    index_copy_(view(out, {-1}), 0, upload_i64(pos, self->device()), src_values(src, is, dim));
  }
  if (should_record({&self, &src_t})) {
    std::vector<TensorPtr> inputs{self};
    if (src_t) inputs.push_back(src_t);
    record_saved_fn("ScatterBackward0", inputs, out, {index},
                    [dim, is, src_geom = src_t ? TensorGeometry{src_t->shape, src_t->dtype, src_t->device()}
                                               : TensorGeometry{}](const TensorPtr& g, const std::vector<TensorPtr>& s,
                                                                   const std::vector<bool>& need) {
      // d/dself: the gradient with the overwritten positions zeroed; d/dsrc: the gradient at the
      // positions each src element was sent to (as torch: every duplicate gets it), zero outside
      // the index's extent.
      std::vector<TensorPtr> grads(need.size());
      if (need[0]) grads[0] = scatter(g, dim, s[0], Scalar::from_int(0), "");
      if (need.size() > 1 && need[1]) {
        TensorPtr gs = gather(g, dim, s[0]);
        if (nonempty(src_geom.shape) != is) {
          gs = view_scatter(gs, src_geom, [is](const TensorPtr& z) {
            TensorPtr r = z->ndim() == 0 ? reshape(z, {1}) : z;
            for (size_t d = 0; d < is.size(); ++d) r = slice(r, int64_t(d), 0, is[d], 1);
            return r;
          });
        }
        grads[1] = gs;
      }
      return grads;
    });
  }
  return out;
}

TensorPtr repeat_interleave_index(const TensorPtr& repeats, std::optional<int64_t> size, const char* op) {
  if (repeats->dtype != DType::Int64 && repeats->dtype != DType::Int32)
    throw TypeError(tag(op) + "repeats must be an int64 or int32 tensor, got " + dtype_name(repeats->dtype));
  if (repeats->ndim() > 1)
    throw ValueError(tag(op) + "repeats must be 0-d or 1-D, got shape " + shape_str(repeats->shape));
  std::vector<int64_t> r = index_values_on_host(*repeats);
  if (size && r.size() == 1) r.assign(size_t(*size), r[0]);
  if (size && int64_t(r.size()) != *size)
    throw ValueError(tag(op) + "repeats must have 1 value or as many as the input's size along dim (" +
                     std::to_string(*size) + "), got " + std::to_string(r.size()));
  std::vector<int64_t> idx;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r[i] < 0) throw ValueError(tag(op) + "repeats cannot be negative, got " + std::to_string(r[i]));
    idx.insert(idx.end(), size_t(r[i]), int64_t(i));
  }
  return upload_i64(idx, repeats->device());
}

}  // namespace bm
