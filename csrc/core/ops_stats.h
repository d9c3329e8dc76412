// Reductions and comparisons composed of registry rows (and prod, a row of its own): prod, std,
// logsumexp, vector_norm, count_nonzero, isclose, allclose, equal. Each follows torch's names,
// defaults, dtype rules and broadcasting; errors name the torch function.
#pragma once
#include <optional>

#include "core/ops.h"

namespace bm {

// torch.prod: every element (dim nullopt) or one dim; bool/int -> int64 unless dtype is given.
TensorPtr prod(const TensorPtr& t, std::optional<int64_t> dim, bool keepdim, std::optional<DType> dtype);
// torch.std = sqrt(var): floating inputs only.
TensorPtr std_dev(const TensorPtr& t, const Dims& dims, double correction, bool keepdim);
// torch.logsumexp: max + log(sum(exp(x - max))) with the max detached (its gradient cancels), an
// infinite max replaced by 0 as torch does; bool/int inputs compute in the default float dtype.
TensorPtr logsumexp(const TensorPtr& t, const Dims& dims, bool keepdim);
// torch.linalg.vector_norm: ord 2 (default), inf, -inf, 0, or any float; floating inputs only.
TensorPtr vector_norm(const TensorPtr& t, double ord, const Dims& dims, bool keepdim, std::optional<DType> dtype);
// torch.count_nonzero: int64 count of nonzero elements (NaN counts) over dims (empty: all).
TensorPtr count_nonzero(const TensorPtr& t, const Dims& dims);
// torch.isclose: |a - b| <= atol + rtol * |b| for finite values, equal values (infinities) always,
// NaNs only with equal_nan. Both inputs must have one dtype; they broadcast.
TensorPtr isclose(const TensorPtr& a, const TensorPtr& b, double rtol, double atol, bool equal_nan);
bool allclose(const TensorPtr& a, const TensorPtr& b, double rtol, double atol, bool equal_nan);
// torch.equal: same shape and equal elements (NaN is not equal to itself).
bool equal(const TensorPtr& a, const TensorPtr& b);

}  // namespace bm
