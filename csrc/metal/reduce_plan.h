// Dim plans for reductions and softmax on Metal: which dims index outputs ("kept") and which are
// reduced, merged and packed for the shaders' argument structs (ReduceArgs, SoftmaxArgs).
#pragma once
#include <functional>
#include <vector>

#include "core/tensor.h"

namespace bm::metal {

struct PlanDim {
  int64_t size, in_st, out_st;  // strides in elements
};

struct ReducePlan {
  std::vector<PlanDim> kept;  // dims not in `dims`, logical order, merged over input AND output strides
  std::vector<PlanDim> red;   // dims in `dims`, logical order, merged over input strides
};

// Size-1 dims are dropped; neighbours (in logical order) merge when the outer one's stride is the
// inner one's stride times its size, so merged indices count in the same row-major order.
// `out` has in's shape except (reductions) size 1 at the reduced dims.
ReducePlan plan_reduce(const Tensor& in, const Tensor& out, const std::vector<int64_t>& dims);

// Rows along one dim (softmax, scans, sorts): `dim` plays the reduced dim, the other dims number
// the rows (kept); `along` is that dim (size 1 for a 0-d input or a size-1 dim).
struct RowPlan {
  std::vector<PlanDim> kept;
  PlanDim along;
};
RowPlan plan_rows(const Tensor& in, const Tensor& out, int64_t dim);

// A contiguous copy of `in` whose memory holds the kept dims outermost and `dims` innermost (both
// in logical order), viewed in in's own dim order: every group of dims then merges into one.
TensorPtr reduced_innermost_copy(const Tensor& in, const std::vector<int64_t>& dims);

// Calls fn(kept dims, input offset, output offset) once if kept has at most BM_MAX_DIMS dims;
// otherwise once per index of the outer dims beyond that, with the offsets moved accordingly.
void for_each_outer(const std::vector<PlanDim>& kept, int64_t in_off, int64_t out_off,
                    const std::function<void(const std::vector<PlanDim>&, int64_t, int64_t)>& fn);

}  // namespace bm::metal
