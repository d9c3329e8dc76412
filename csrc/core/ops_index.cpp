// t[idx] and t[idx] = value: basic indices become views (select / slice / unsqueeze); advanced
// ones become one index_select (or index_copy_) along merged dims, with linear indices computed
// on the host. See core/ops_index.h for the rules.
#include "core/ops_index.h"
#include "core/ops_shape.h"
#include "core/memory.h"

#include <algorithm>
#include <string>

#include "core/errors.h"

namespace bm {

TensorIndex TensorIndex::from_int(int64_t v) {
  TensorIndex r;
  r.kind = Kind::Int;
  r.i = v;
  return r;
}
TensorIndex TensorIndex::from_slice(std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) {
  TensorIndex r;
  r.kind = Kind::Slice;
  r.start = start;
  r.stop = stop;
  r.step = step;
  return r;
}
TensorIndex TensorIndex::none() { return TensorIndex{}; }
TensorIndex TensorIndex::ellipsis() {
  TensorIndex r;
  r.kind = Kind::Ellipsis;
  return r;
}
TensorIndex TensorIndex::from_bool(bool v) {
  TensorIndex r;
  r.kind = Kind::Bool;
  r.b = v;
  return r;
}
TensorIndex TensorIndex::from_tensor(TensorPtr t) {
  TensorIndex r;
  r.kind = Kind::Tensor;
  r.t = std::move(t);
  return r;
}

namespace {

using Kind = TensorIndex::Kind;

std::string tag(const char* op) { return std::string("[") + op + "] "; }

// An advanced index after the basic pass: int indices into dim `dim` of the view, with their
// values on the host (and the device tensor they came from, when there is one).
struct IntIndex {
  int64_t dim = 0;
  int64_t odim = 0;  // the dim of t it indexes, for messages
  Shape shape;
  std::vector<int64_t> vals;
  TensorPtr t;
};

// Before masks are expanded: an int index, a bool mask (dims dim .. dim + mask.ndim - 1), or a
// host-made index for a Python bool.
struct Pending {
  int64_t dim = 0;
  int64_t odim = 0;  // the first dim of t it indexes (messages name t's dims, as torch)
  TensorPtr t;
  std::vector<int64_t> host;  // when !t: the values ([0] or [])
};

struct Basic {
  TensorPtr view;  // t after the basic indices: a view of t
  std::vector<Pending> adv;
  // Dims of `view` taken by slices with negative steps: the view holds them in increasing order
  // (a positive-step slice over the same elements); t[idx] flips them (a copy, not a view: the
  // kernels take non-negative strides), t[idx] = v writes v flipped along them.
  Dims flips;
};

bool host_bool(const Tensor& t) {
  wait_readable(t);
  return *t.data<bool>();
}

Basic apply_basic(const char* op, const TensorPtr& t, const std::vector<TensorIndex>& idx, const Tensor* value) {
  // 1. devices, 2. dtypes, 3. shapes and values.
  std::vector<std::pair<const char*, const Tensor*>> named{{"self", t.get()}};
  for (const TensorIndex& x : idx)
    if (x.kind == Kind::Tensor) {
      if (!x.t) throw ValueError(tag(op) + "an index tensor is missing");
      named.push_back({"indices", x.t.get()});
    }
  if (value) named.push_back({"value", value});
  check_same_device(op, named);
  int64_t consumed = 0, ellipses = 0;
  for (const TensorIndex& x : idx) {
    switch (x.kind) {
      case Kind::Int: case Kind::Slice: ++consumed; break;
      case Kind::Ellipsis: ++ellipses; break;
      case Kind::None: case Kind::Bool: break;
      case Kind::Tensor: {
        DType d = x.t->dtype;
        if (d != DType::Bool && d != DType::Int32 && d != DType::Int64)
          throw IndexError(tag(op) + "tensors used as indices must be int64, int32 or bool tensors, got " +
                           dtype_name(d));
        consumed += d == DType::Bool ? x.t->ndim() : 1;
        break;
      }
    }
  }
  if (ellipses > 1) throw IndexError(tag(op) + "an index can only have a single ellipsis ('...')");
  if (consumed > t->ndim())
    throw IndexError(tag(op) + "too many indices for a tensor of dimension " + std::to_string(t->ndim()) + " (got " +
                     std::to_string(consumed) + ")");
  Basic r{t, {}, {}};
  int64_t dim = 0, odim = 0;  // the next dim of the view, and of t
  auto select_int = [&](int64_t i) {
    const int64_t size = r.view->shape[size_t(dim)];
    if (i < -size || i >= size)
      throw IndexError(tag(op) + "index " + std::to_string(i) + " is out of bounds for dimension " +
                       std::to_string(odim) + " with size " + std::to_string(size));
    r.view = select(r.view, dim, i);
    ++odim;
  };
  auto bool_index = [&](bool b) {  // torch: a new dim of size 1, indexed by [0] or by []
    r.view = unsqueeze(r.view, dim);
    Pending p;
    p.odim = odim;
    p.dim = dim++;
    if (b) p.host.push_back(0);
    r.adv.push_back(std::move(p));
  };
  for (const TensorIndex& x : idx) {
    switch (x.kind) {
      case Kind::Int: select_int(x.i); break;
      case Kind::Slice:
        if (x.step == 0) throw ValueError(tag(op) + "slice step cannot be zero");
        if (x.step < 0 && r.view->ndim() > dim) {
          // Python's rule for negative steps, then the same elements as a positive-step slice.
          const int64_t size = r.view->shape[size_t(dim)];
          auto clampi = [&](int64_t v) { if (v < 0) v += size; return std::min(std::max<int64_t>(v, -1), size - 1); };
          const int64_t start = x.start ? clampi(*x.start) : size - 1, stop = x.stop ? clampi(*x.stop) : -1;
          const int64_t n = start > stop ? (start - stop - 1) / -x.step + 1 : 0;
          const int64_t first = n > 0 ? start + (n - 1) * x.step : 0;
          r.view = slice(r.view, dim, first, first + (n > 0 ? (n - 1) * -x.step + 1 : 0), -x.step);
          r.flips.push_back(dim++);
        } else {
          r.view = slice(r.view, dim++, x.start, x.stop, x.step);
        }
        ++odim;
        break;
      case Kind::None: r.view = unsqueeze(r.view, dim++); break;
      case Kind::Ellipsis:
        dim += t->ndim() - consumed;
        odim += t->ndim() - consumed;
        break;
      case Kind::Bool: bool_index(x.b); break;
      case Kind::Tensor: {
        const Tensor& it = *x.t;
        if (it.ndim() == 0) {  // torch: a 0-d int tensor is an int, a 0-d bool tensor a bool
          if (it.dtype == DType::Bool) bool_index(host_bool(it));
          else select_int(index_values_on_host(it)[0]);
          break;
        }
        if (it.dtype == DType::Bool) {
          for (int64_t k = 0; k < it.ndim(); ++k)
            if (it.shape[size_t(k)] != r.view->shape[size_t(dim + k)])
              throw IndexError(tag(op) + "the shape of the mask " + shape_str(it.shape) + " at index " +
                               std::to_string(k) + " does not match the shape of the indexed tensor " +
                               shape_str(t->shape) + " at index " + std::to_string(odim + k));
        }
        r.adv.push_back(Pending{dim, odim, x.t, {}});
        dim += it.dtype == DType::Bool ? it.ndim() : 1;
        odim += it.dtype == DType::Bool ? it.ndim() : 1;
        break;
      }
    }
  }
  return r;
}

// Masks become one index per mask dim (the columns of nonzero); every index is read on the host
// and checked against the size of the dim it indexes.
std::vector<IntIndex> int_indices(const char* op, const Basic& b) {
  std::vector<IntIndex> out;
  for (const Pending& p : b.adv) {
    if (!p.t) {
      out.push_back(IntIndex{p.dim, p.odim, {int64_t(p.host.size())}, p.host, nullptr});
    } else if (p.t->dtype == DType::Bool) {
      TensorPtr nz = nonzero(p.t);
      const int64_t n = nz->shape[0], k = nz->shape[1];
      std::vector<int64_t> all = index_values_on_host(*nz);
      for (int64_t c = 0; c < k; ++c) {
        IntIndex ii{p.dim + c, p.odim + c, {n}, std::vector<int64_t>(size_t(n)), select(nz, 1, c)};
        for (int64_t r = 0; r < n; ++r) ii.vals[size_t(r)] = all[size_t(r * k + c)];
        out.push_back(std::move(ii));
      }
    } else {
      out.push_back(IntIndex{p.dim, p.odim, p.t->shape, index_values_on_host(*p.t), p.t});
    }
  }
  for (const IntIndex& ii : out) {
    const int64_t size = b.view->shape[size_t(ii.dim)];
    for (int64_t v : ii.vals)
      if (v < -size || v >= size)
        throw IndexError(tag(op) + "index " + std::to_string(v) + " is out of bounds for dimension " +
                         std::to_string(ii.odim) + " with size " + std::to_string(size));
  }
  return out;
}

// The advanced part as one gather: `src` (the view, or its permutation with the advanced dims
// first) has them merged into dim `pos` of `merged_shape`; `lin` indexes that merged dim; the
// result of the gather reshapes to `result_shape`.
struct Advanced {
  TensorPtr src;
  int64_t pos = 0;
  int64_t m = 0;  // number of advanced dims merged
  Shape merged_shape, gathered_shape, result_shape;
  TensorPtr lin;
};

Advanced plan_advanced(const char* op, const Basic& b) {
  std::vector<IntIndex> ix = int_indices(op, b);
  Advanced a;
  a.m = int64_t(ix.size());
  // Broadcast shape of the indices.
  Shape bshape = ix[0].shape;
  for (size_t k = 1; k < ix.size(); ++k) {
    try {
      bshape = broadcast_shapes(op, bshape, ix[k].shape);
    } catch (const ValueError&) {
      std::string shapes;
      for (size_t j = 0; j < ix.size(); ++j) shapes += (j ? ", " : "") + shape_str(ix[j].shape);
      throw IndexError(tag(op) + "shape mismatch: indexing tensors could not be broadcast together with shapes " +
                       shapes);
    }
  }
  const int64_t nb = shape_numel(bshape);
  bool adjacent = true;
  for (size_t k = 1; k < ix.size(); ++k) adjacent &= ix[k].dim == ix[k - 1].dim + 1;
  const TensorPtr& v = b.view;
  if (adjacent) {
    a.src = v;
    a.pos = ix[0].dim;
  } else {  // torch: separated advanced indices put their dims first
    Dims perm;
    for (const IntIndex& ii : ix) perm.push_back(ii.dim);
    for (int64_t d = 0; d < v->ndim(); ++d)
      if (std::find(perm.begin(), perm.begin() + a.m, d) == perm.begin() + a.m) perm.push_back(d);
    a.src = permute(v, perm);
    a.pos = 0;
  }
  const Shape& s = a.src->shape;
  int64_t merged = 1;
  for (int64_t k = 0; k < a.m; ++k) merged *= s[size_t(a.pos + k)];
  Shape pre(s.begin(), s.begin() + a.pos), post(s.begin() + a.pos + a.m, s.end());
  a.merged_shape = pre;
  a.merged_shape.push_back(merged);
  a.merged_shape.insert(a.merged_shape.end(), post.begin(), post.end());
  a.gathered_shape = a.merged_shape;
  a.gathered_shape[size_t(a.pos)] = nb;
  a.result_shape = pre;
  a.result_shape.insert(a.result_shape.end(), bshape.begin(), bshape.end());
  a.result_shape.insert(a.result_shape.end(), post.begin(), post.end());

  // Linear indices into the merged dim (row-major over the advanced dims, in dim order).
  bool negative = false;
  for (const IntIndex& ii : ix)
    for (int64_t x : ii.vals) negative |= x < 0;
  if (a.m == 1 && !negative && ix[0].t) {
    a.lin = ix[0].t->ndim() == 1 ? ix[0].t : reshape(ix[0].t, {-1});
    return a;
  }
  std::vector<int64_t> lin(size_t(nb), 0);
  int64_t mult = 1;
  for (int64_t k = a.m - 1; k >= 0; --k) {
    const IntIndex& ii = ix[size_t(k)];
    const int64_t size = v->shape[size_t(ii.dim)];
    const Shape st = broadcast_strides(ii.shape, contiguous_strides(ii.shape), bshape);
    std::vector<int64_t> pos(bshape.size(), 0);
    int64_t src = 0;
    for (int64_t e = 0; e < nb; ++e) {
      int64_t x = ii.vals[size_t(src)];
      lin[size_t(e)] += (x < 0 ? x + size : x) * mult;
      for (size_t d = bshape.size(); d-- > 0;) {  // odometer over the broadcast shape
        src += st[d];
        if (++pos[d] < bshape[d]) break;
        src -= st[d] * bshape[d];
        pos[d] = 0;
      }
    }
    mult *= size;
  }
  a.lin = from_host(lin.data(), {nb}, {int64_t(sizeof(int64_t))}, DType::Int64, v->device());
  return a;
}

}  // namespace

TensorPtr index(const TensorPtr& t, const std::vector<TensorIndex>& idx) {
  OpScope scope("index");  // named by OutOfMemoryError
  Basic b = apply_basic("index", t, idx, nullptr);
  if (!b.flips.empty()) b.view = flip(b.view, b.flips);
  if (b.adv.empty()) return b.view == t ? view(t, t->shape) : b.view;  // x[()] / x[...]: an alias
  Advanced a = plan_advanced("index", b);
  TensorPtr merged = a.m == 1 ? a.src : reshape(a.src, a.merged_shape);
  return reshape(index_select(merged, a.pos, a.lin), a.result_shape);
}

void index_put_(const TensorPtr& t, const std::vector<TensorIndex>& idx, const Operand& value) {
  OpScope scope("index_put");  // named by OutOfMemoryError
  const char* op = "index_put";
  Basic b = apply_basic(op, t, idx, value.is_scalar() ? nullptr : value.t.get());
  if (!b.flips.empty() && !b.adv.empty())
    throw UnsupportedError(tag(op) + "a slice with a negative step together with tensor indices is not supported; "
                           "flip the value and use a positive step");
  if (value.is_scalar() && b.adv.size() == 1 && b.adv[0].t && b.adv[0].t->dtype == DType::Bool) {
    // t[mask] = number: one elementwise pass, view := where(mask, number, view), with the mask
    // viewed to broadcast over the dims it does not cover. No nonzero(), no host read.
    const TensorPtr& mask = b.adv[0].t;
    Dims s(size_t(b.view->ndim()), 1);
    for (int64_t k = 0; k < mask->ndim(); ++k) s[size_t(b.adv[0].dim + k)] = mask->shape[size_t(k)];
    copy_into(b.view, where(reshape(mask, s), scalar_tensor(value.s, t->dtype, t->device()), b.view));
    return;
  }
  Advanced a;
  if (!b.adv.empty()) a = plan_advanced(op, b);
  const Shape& target = b.adv.empty() ? b.view->shape : a.result_shape;
  // The value: t's dtype, broadcast to the indexed shape (leading size-1 dims dropped, as torch).
  TensorPtr val;
  if (value.is_scalar()) {
    val = scalar_tensor(value.s, t->dtype, t->device());
  } else {
    val = value.t;
    while (val->ndim() > int64_t(target.size()) && val->shape[0] == 1) val = squeeze(val, Dims{0});
    bool ok = val->ndim() <= int64_t(target.size());
    if (ok) {
      try {
        ok = broadcast_shapes(op, val->shape, target) == target;
      } catch (const ValueError&) {
        ok = false;
      }
    }
    if (!ok)
      throw ValueError(tag(op) + "shape mismatch: value tensor of shape " + shape_str(value.t->shape) +
                       " cannot be broadcast to indexing result of shape " + shape_str(target));
    // A value sharing t's memory is copied first, so the writes cannot change what is read.
    if (val->storage == t->storage) val = clone(val);
    val = cast(val, t->dtype);
  }
  val = expand(val, target);
  if (b.adv.empty()) {
    copy_into(b.view, b.flips.empty() || value.is_scalar() ? val : flip(val, b.flips));
    return;
  }
  TensorPtr src = reshape(val, a.gathered_shape);
  if (a.m == 1) {
    index_copy_(a.src, a.pos, a.lin, src);
    return;
  }
  Shape st;
  if (compute_view_strides(a.src->shape, a.src->strides, a.merged_shape, &st)) {
    index_copy_(view(a.src, a.merged_shape), a.pos, a.lin, src);
    return;
  }
  // The advanced dims cannot be merged in place: write into a contiguous copy, then copy back.
  TensorPtr tmp = empty_tensor(a.src->shape, t->dtype, t->device());
  copy_into(tmp, a.src);
  index_copy_(view(tmp, a.merged_shape), a.pos, a.lin, src);
  copy_into(a.src, tmp);
}

}  // namespace bm
