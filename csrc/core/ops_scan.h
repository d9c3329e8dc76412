// Scans, sorting and the selections built on sorting: cumsum, cumprod, argsort, sort, topk,
// median, unique, and take_along_dim (the gather that turns sorted positions into values).
//
// The kernels are two registry rows: the scans (cumsum / cumprod) and argsort (a stable per-row
// sort of positions, NaN as the largest value). sort, topk and median pick their values with
// take_along_dim, a composition of differentiable ops (reshape, index_select), so their values'
// gradients flow to the chosen positions without rules of their own.
#pragma once
#include <optional>
#include <tuple>
#include <utility>

#include "core/ops.h"

namespace bm {

// Inclusive scans along dim, torch's dtype rule: bool/int -> int64 unless `dtype` is given (the
// input is cast to it first).
TensorPtr cumsum(const TensorPtr& t, int64_t dim, std::optional<DType> dtype);
TensorPtr cumprod(const TensorPtr& t, int64_t dim, std::optional<DType> dtype);

// int64 positions sorting each row along dim; always stable.
TensorPtr argsort(const TensorPtr& t, int64_t dim, bool descending);
// (values, indices): stable, NaN sorts as the largest.
std::pair<TensorPtr, TensorPtr> sort(const TensorPtr& t, int64_t dim, bool descending);
// (values, indices) of the k largest (smallest) along dim, in sorted order; ties keep input order.
std::pair<TensorPtr, TensorPtr> topk(const TensorPtr& t, int64_t k, int64_t dim, bool largest);
// The lower median along dim (values, indices); a row holding NaN gives NaN (its first NaN).
std::pair<TensorPtr, TensorPtr> median_dim(const TensorPtr& t, int64_t dim, bool keepdim);
// The lower median of every element (0-d); NaN if any element is NaN or there are none.
TensorPtr median(const TensorPtr& t);

// out[..., i, ...] = t[..., index[..., i, ...], ...] along dim (torch.take_along_dim with a dim,
// torch.gather with an index of t's shape except at dim). index: int64, values in [0, size).
TensorPtr take_along_dim(const TensorPtr& t, const TensorPtr& index, int64_t dim);

// torch.unique: (values, inverse, counts); inverse and counts are null unless asked. Sorted
// ascending (sorted=False gives the same order, which torch allows). dim: unique slices along
// dim. The element comparisons run on the host: a tensor on another device is read back (an
// explicit copy, waiting for its queue) and the outputs are gathered on its own device.
std::tuple<TensorPtr, TensorPtr, TensorPtr> unique(const TensorPtr& t, bool return_inverse, bool return_counts,
                                                   std::optional<int64_t> dim);

}  // namespace bm
