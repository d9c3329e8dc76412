#include <array>

#include "core/ops.h"
#include "metal/kernels.h"

namespace bm::metal {

namespace {

// Merges dims on the host so shaders index with as few divisions as possible.
void merge(const std::vector<const Tensor*>& ts, std::vector<int64_t>* merged_shape,
             std::vector<std::vector<int64_t>>* merged_strides) {
  const Shape& s = ts[0]->shape;
  size_t n = ts.size();
  merged_shape->clear();
  merged_strides->assign(n, {});
  for (size_t d = 0; d < s.size(); ++d) {
    if (s[d] == 1) continue;
    bool can = !merged_shape->empty();
    for (size_t k = 0; k < n && can; ++k) can = (*merged_strides)[k].back() == ts[k]->strides[d] * s[d];
    if (can) {
      merged_shape->back() *= s[d];
      for (size_t k = 0; k < n; ++k) (*merged_strides)[k].back() = ts[k]->strides[d];
    } else {
      merged_shape->push_back(s[d]);
      for (size_t k = 0; k < n; ++k) (*merged_strides)[k].push_back(ts[k]->strides[d]);
    }
  }
}

void emit(const std::vector<int64_t>& shape, const std::vector<std::vector<int64_t>>& strides,
          const std::vector<int64_t>& offsets, size_t first, const std::function<void(const Layout&)>& fn) {
  size_t nd = shape.size();
  if (nd - first <= BM_MAX_DIMS) {
    Layout L;
    L.ndim = int(nd - first);
    L.offset = offsets;
    L.strides.assign(strides.size(), {});
    for (size_t d = first; d < nd; ++d) {
      L.shape[d - first] = shape[d];
      L.numel *= shape[d];
      for (size_t k = 0; k < strides.size(); ++k) L.strides[k][d - first] = strides[k][d];
    }
    fn(L);
    return;
  }
  for (int64_t i = 0; i < shape[first]; ++i) {  // peel one outer dim
    std::vector<int64_t> off = offsets;
    for (size_t k = 0; k < off.size(); ++k) off[k] += i * strides[k][first];
    emit(shape, strides, off, first + 1, fn);
  }
}

}  // namespace

void for_each_layout(const std::vector<const Tensor*>& ts, const std::function<void(const Layout&)>& fn) {
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> strides;
  merge(ts, &shape, &strides);
  std::vector<int64_t> offsets;
  for (const Tensor* t : ts) offsets.push_back(t->offset);
  emit(shape, strides, offsets, 0, fn);
}

}  // namespace bm::metal
