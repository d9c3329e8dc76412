// View ops: new (shape, strides, offset) over the same storage. Never a copy, except reshape's
// documented fallback.
#include <algorithm>

#include "autograd/record.h"
#include "core/errors.h"
#include "core/ops.h"

namespace bm {

namespace {

TensorGeometry geometry(const TensorPtr& t) { return {t->shape, t->dtype, t->device()}; }

// A view of t. It remembers its root base (for in-place writes through it) and, when t requires
// grad, gets a node whose backward is `back`.
template <typename F>
TensorPtr finish_view(const TensorPtr& t, TensorPtr v, const char* name, F&& back) {
  v->view_base = t->view_base ? t->view_base : t;
  if (grad_enabled() && requires_grad(*t)) record_fn(name, {t}, v, BackwardFn(std::forward<F>(back)));
  return v;
}

// The backward of a view that only changes the shape: the gradient reshaped back.
auto reshape_back(const TensorPtr& t) {
  return [shape = Dims(t->shape.begin(), t->shape.end())](const TensorPtr& g) {
    return std::vector<TensorPtr>{reshape(g, shape)};
  };
}

}  // namespace

TensorPtr view_scatter(const TensorPtr& g, const TensorGeometry& geom, const std::function<TensorPtr(const TensorPtr&)>& view_fn) {
  TensorPtr z = full(geom.shape, Scalar::from_int(0), g->dtype, g->device());
  {
    GradModeGuard off(false);
    copy_into(view_fn(z), g);
  }
  if (grad_enabled() && requires_grad(*g))
    record_fn("ViewScatterBackward0", {g}, z, [view_fn](const TensorPtr& gg) { return std::vector<TensorPtr>{view_fn(gg)}; });
  return z;
}

TensorPtr view(const TensorPtr& t, const Dims& shape_in) {
  Shape shape = infer_size("view", shape_in, t->numel());
  Shape strides;
  if (!compute_view_strides(t->shape, t->strides, shape, &strides))
    throw ValueError("[view] a tensor of shape " + shape_str(t->shape) + " and strides " + shape_str(t->strides) +
                     " cannot be viewed as " + shape_str(shape) +
                     " because its memory is not laid out compatibly; use .reshape(...) (which copies) instead");
  return finish_view(t, make_view(t, shape, strides, t->offset), "ViewBackward0", reshape_back(t));
}

TensorPtr reshape(const TensorPtr& t, const Dims& shape_in) {
  Shape shape = infer_size("reshape", shape_in, t->numel());
  Shape strides;
  if (compute_view_strides(t->shape, t->strides, shape, &strides))
    return finish_view(t, make_view(t, shape, strides, t->offset), "ViewBackward0", reshape_back(t));
  TensorPtr c = contiguous(t);
  return finish_view(c, make_view(c, shape, contiguous_strides(shape), c->offset), "ViewBackward0", reshape_back(c));
}

TensorPtr transpose(const TensorPtr& t, int64_t d0, int64_t d1) {
  int64_t nd = t->ndim();
  d0 = normalize_dim("transpose", d0, nd);
  d1 = normalize_dim("transpose", d1, nd);
  if (nd == 0) return finish_view(t, make_view(t, t->shape, t->strides, t->offset), "TransposeBackward0", reshape_back(t));
  Shape s = t->shape, st = t->strides;
  std::swap(s[d0], s[d1]);
  std::swap(st[d0], st[d1]);
  return finish_view(t, make_view(t, s, st, t->offset), "TransposeBackward0",
                     [d0, d1](const TensorPtr& g) { return std::vector<TensorPtr>{transpose(g, d0, d1)}; });
}

TensorPtr permute(const TensorPtr& t, const Dims& dims) {
  int64_t nd = t->ndim();
  if (int64_t(dims.size()) != nd)
    throw ValueError("[permute] got " + std::to_string(dims.size()) + " dims for a tensor with " + std::to_string(nd) +
                     " dims");
  Shape s(nd), st(nd);
  std::vector<bool> seen(nd, false);
  for (int64_t i = 0; i < nd; ++i) {
    int64_t d = normalize_dim("permute", dims[i], nd);
    if (seen[d]) throw ValueError("[permute] dim " + std::to_string(dims[i]) + " appears more than once");
    seen[d] = true;
    s[i] = t->shape[d];
    st[i] = t->strides[d];
  }
  Dims inverse(nd);
  for (int64_t i = 0; i < nd; ++i) inverse[size_t(normalize_dim("permute", dims[i], nd))] = i;
  return finish_view(t, make_view(t, s, st, t->offset), "PermuteBackward0",
                     [inverse](const TensorPtr& g) { return std::vector<TensorPtr>{permute(g, inverse)}; });
}

TensorPtr unsqueeze(const TensorPtr& t, int64_t dim) {
  int64_t nd = t->ndim();
  dim = normalize_dim("unsqueeze", dim, nd + 1);
  Shape s = t->shape, st = t->strides;
  int64_t stride = dim < nd ? s[dim] * st[dim] : 1;
  s.insert(s.begin() + dim, 1);
  st.insert(st.begin() + dim, stride);
  return finish_view(t, make_view(t, s, st, t->offset), "UnsqueezeBackward0", reshape_back(t));
}

TensorPtr squeeze(const TensorPtr& t, std::optional<Dims> dims) {
  int64_t nd = t->ndim();
  std::vector<bool> drop(nd, false);
  if (!dims) {
    for (int64_t d = 0; d < nd; ++d) drop[d] = t->shape[d] == 1;
  } else {
    for (int64_t d : *dims) {
      int64_t n = normalize_dim("squeeze", d, nd);
      if (nd > 0) drop[n] = t->shape[n] == 1;  // torch: squeezing a dim of size != 1 is a no-op
    }
  }
  Shape s, st;
  for (int64_t d = 0; d < nd; ++d)
    if (!drop[d]) { s.push_back(t->shape[d]); st.push_back(t->strides[d]); }
  return finish_view(t, make_view(t, s, st, t->offset), "SqueezeBackward0", reshape_back(t));
}

TensorPtr expand(const TensorPtr& t, const Dims& shape) {
  int64_t nd = t->ndim(), n = int64_t(shape.size());
  if (n < nd)
    throw ValueError("[expand] the number of sizes (" + std::to_string(n) + ") must be at least the tensor's dims (" +
                     std::to_string(nd) + ")");
  Shape s(n), st(n);
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t j = i - (n - nd);
    int64_t want = shape[i];
    if (j < 0) {
      if (want < 0) throw ValueError("[expand] -1 is not allowed for a new leading dim, got " + shape_str(shape));
      s[i] = want; st[i] = 0;
      continue;
    }
    int64_t have = t->shape[j];
    if (want == -1) want = have;
    if (want < 0) throw ValueError("[expand] invalid size " + std::to_string(want) + " in " + shape_str(shape));
    if (have == want) { s[i] = have; st[i] = t->strides[j]; }
    else if (have == 1) { s[i] = want; st[i] = 0; }
    else
      throw ValueError("[expand] cannot expand shape " + shape_str(t->shape) + " to " + shape_str(shape) + ": dim " +
                       std::to_string(i) + " has size " + std::to_string(have) + ", not 1");
  }
  Shape from = t->shape;
  return finish_view(t, make_view(t, s, st, t->offset), "ExpandBackward0",
                     [from](const TensorPtr& g) { return std::vector<TensorPtr>{sum_to(g, from)}; });
}

TensorPtr flatten(const TensorPtr& t, int64_t start_dim, int64_t end_dim) {
  int64_t nd = t->ndim();
  if (nd == 0) return reshape(t, {1});
  start_dim = normalize_dim("flatten", start_dim, nd);
  end_dim = normalize_dim("flatten", end_dim, nd);
  if (start_dim > end_dim) throw ValueError("[flatten] start_dim must not come after end_dim");
  Dims s;
  for (int64_t d = 0; d < start_dim; ++d) s.push_back(t->shape[d]);
  int64_t m = 1;
  for (int64_t d = start_dim; d <= end_dim; ++d) m *= t->shape[d];
  s.push_back(m);
  for (int64_t d = end_dim + 1; d < nd; ++d) s.push_back(t->shape[d]);
  return reshape(t, s);
}

TensorPtr select(const TensorPtr& t, int64_t dim, int64_t index) {
  int64_t nd = t->ndim();
  if (nd == 0) throw IndexError("[select] a 0-d tensor cannot be indexed");
  dim = normalize_dim("select", dim, nd);
  int64_t size = t->shape[dim];
  if (index < -size || index >= size)
    throw IndexError("[select] index " + std::to_string(index) + " is out of bounds for dim " + std::to_string(dim) +
                     " with size " + std::to_string(size));
  if (index < 0) index += size;
  Shape s = t->shape, st = t->strides;
  int64_t off = t->offset + index * st[dim];
  s.erase(s.begin() + dim);
  st.erase(st.begin() + dim);
  return finish_view(t, make_view(t, s, st, off), "SelectBackward0", [geom = geometry(t), dim, index](const TensorPtr& g) {
    return std::vector<TensorPtr>{view_scatter(g, geom, [dim, index](const TensorPtr& z) { return select(z, dim, index); })};
  });
}

TensorPtr slice(const TensorPtr& t, int64_t dim, std::optional<int64_t> start_in, std::optional<int64_t> stop_in,
                int64_t step) {
  int64_t nd = t->ndim();
  if (nd == 0) throw IndexError("[slice] a 0-d tensor cannot be sliced");
  dim = normalize_dim("slice", dim, nd);
  if (step <= 0) throw ValueError("[slice] step must be greater than zero, got " + std::to_string(step));
  int64_t size = t->shape[dim];
  // Python slice semantics for positive steps: clamp into [0, size].
  auto clampi = [&](int64_t v) { if (v < 0) v += size; return std::min(std::max<int64_t>(v, 0), size); };
  int64_t start = start_in ? clampi(*start_in) : 0;
  int64_t stop = stop_in ? clampi(*stop_in) : size;
  int64_t len = stop > start ? 1 + (stop - start - 1) / step : 0;  // no overflow for a step near 2**63
  Shape s = t->shape, st = t->strides;
  s[dim] = len;
  int64_t off = t->offset + (len > 0 ? start * st[dim] : 0);
  st[dim] *= step;
  return finish_view(t, make_view(t, s, st, off), "SliceBackward0",
                     [geom = geometry(t), dim, start, stop, step](const TensorPtr& g) {
    return std::vector<TensorPtr>{view_scatter(g, geom, [=](const TensorPtr& z) { return slice(z, dim, start, stop, step); })};
  });
}

}  // namespace bm
