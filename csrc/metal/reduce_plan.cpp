#include "metal/reduce_plan.h"

#include <algorithm>

#include "core/ops.h"
#include "metal/kernels.h"

namespace bm::metal {

namespace {

void push_merged(std::vector<PlanDim>& v, PlanDim d, bool with_out) {
  if (d.size == 1) return;
  if (!v.empty()) {
    PlanDim& o = v.back();
    if (o.in_st == d.in_st * d.size && (!with_out || o.out_st == d.out_st * d.size)) {
      o = {o.size * d.size, d.in_st, d.out_st};
      return;
    }
  }
  v.push_back(d);
}

}  // namespace

ReducePlan plan_reduce(const Tensor& in, const Tensor& out, const std::vector<int64_t>& dims) {
  ReducePlan p;
  for (int64_t d = 0; d < in.ndim(); ++d) {
    PlanDim pd{in.shape[d], in.strides[d], out.strides[d]};
    if (std::binary_search(dims.begin(), dims.end(), d)) push_merged(p.red, pd, false);
    else push_merged(p.kept, pd, true);
  }
  return p;
}

RowPlan plan_rows(const Tensor& in, const Tensor& out, int64_t dim) {
  ReducePlan p = plan_reduce(in, out, in.ndim() == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{dim});
  return {std::move(p.kept), p.red.empty() ? PlanDim{1, 0, 0} : p.red[0]};
}

TensorPtr reduced_innermost_copy(const Tensor& in, const std::vector<int64_t>& dims) {
  Dims order;
  for (int64_t d = 0; d < in.ndim(); ++d)
    if (!std::binary_search(dims.begin(), dims.end(), d)) order.push_back(d);
  order.insert(order.end(), dims.begin(), dims.end());
  TensorPtr moved = contiguous(permute(std::make_shared<Tensor>(in), order));
  Shape strides(in.shape.size());
  for (size_t k = 0; k < order.size(); ++k) strides[size_t(order[k])] = moved->strides[k];
  return make_view(moved, in.shape, strides, moved->offset);
}

void for_each_outer(const std::vector<PlanDim>& kept, int64_t in_off, int64_t out_off,
                    const std::function<void(const std::vector<PlanDim>&, int64_t, int64_t)>& fn) {
  if (kept.size() <= BM_MAX_DIMS) {
    fn(kept, in_off, out_off);
    return;
  }
  const std::vector<PlanDim> inner(kept.begin() + 1, kept.end());
  for (int64_t i = 0; i < kept[0].size; ++i)
    for_each_outer(inner, in_off + i * kept[0].in_st, out_off + i * kept[0].out_st, fn);
}

}  // namespace bm::metal
