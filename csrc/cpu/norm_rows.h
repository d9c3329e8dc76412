// Row helpers of the normalisation kernels (norm.cpp, norm_backward.cpp): a tensor's leading or
// trailing dims as one run of merged dims, offsets along it, a blocked sum, and a row's statistics.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/tensor.h"
#include "cpu/loops.h"
#include "cpu/norm_f32.h"

namespace bm::cpu {

// Dims [from, to) of t in logical order with size-1 dims dropped and neighbours merged where the
// outer one's stride is the inner one's stride times its size, so a linear index over the run
// still counts row-major. Strides in elements.
struct DimRun {
  std::vector<int64_t> size, stride;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : size) n *= s;
    return n;
  }
  bool unit() const { return size.empty() || (size.size() == 1 && stride[0] == 1); }  // one dense run
};

inline DimRun merged(const Tensor& t, size_t from, size_t to) {
  DimRun r;
  for (size_t d = from; d < to; ++d) {
    if (t.shape[d] == 1) continue;
    if (!r.size.empty() && r.stride.back() == t.strides[d] * t.shape[d]) {
      r.size.back() *= t.shape[d];
      r.stride.back() = t.strides[d];
    } else {
      r.size.push_back(t.shape[d]);
      r.stride.push_back(t.strides[d]);
    }
  }
  return r;
}

// A tensor's leading dims (one index per row) and its trailing k dims (the row itself), merged.
inline DimRun row_dims(const Tensor& t, size_t k) { return merged(t, 0, t.shape.size() - k); }
inline DimRun col_dims(const Tensor& t, size_t k) { return merged(t, t.shape.size() - k, t.shape.size()); }

// Rows per parallel_for chunk for rows of n elements: about kParallelGrain elements a chunk.
inline int64_t row_grain(int64_t n) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)); }

// Element offset of linear index i of a run.
inline int64_t offset_of(const DimRun& r, int64_t i) {
  int64_t off = 0;
  for (size_t d = r.size.size(); d-- > 0;) {
    off += (i % r.size[d]) * r.stride[d];
    i /= r.size[d];
  }
  return off;
}

// f(j, offset) for j = 0 .. numel-1 in order, walking the offsets like an odometer (no divisions).
template <typename F>
inline void for_each_offset(const DimRun& r, F&& f) {
  const size_t nd = r.size.size();
  if (nd == 0) { f(int64_t(0), int64_t(0)); return; }
  const int64_t inner = r.size[nd - 1], st = r.stride[nd - 1], n = r.numel();
  std::vector<int64_t> idx(nd, 0);
  int64_t base = 0;
  for (int64_t j = 0; j < n; j += inner) {
    for (int64_t k = 0; k < inner; ++k) f(j + k, base + k * st);
    for (size_t d = nd - 1; d-- > 0;) {  // carry into the outer dims
      base += r.stride[d];
      if (++idx[d] < r.size[d]) break;
      base -= r.stride[d] * r.size[d];
      idx[d] = 0;
    }
  }
}

// Sums in blocks of kBlock with 8 independent accumulators: the compiler vectorises the lanes, and
// the rounding error grows with kBlock / 8 + n / kBlock instead of n.
constexpr int64_t kBlock = 1024;

template <typename A, typename F>
inline A blocked_sum(int64_t n, F&& term) {
  A total = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    A s[8] = {};
    int64_t j = b;
    for (; j + 8 <= e; j += 8)
      for (int l = 0; l < 8; ++l) s[l] += term(j + l);
    A tail = 0;
    for (; j < e; ++j) tail += term(j);
    total += ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + tail;
  }
  return total;
}

// Mean and rstd = 1 / sqrt(var + eps) of the dense row v[0..n), var biased, in two passes. The
// forward and the backward both call this, so the backward recomputes the forward's statistics to
// the bit.
template <typename A>
inline void row_stats(const A* v, int64_t n, A eps, A& mean, A& rstd) {
  A var;
  if constexpr (std::is_same_v<A, float>) {  // float and the half types: the AVX2/AVX-512 rows
    mean = sum_f32(v, n) / A(n);
    var = sq_dev_sum_f32(v, n, mean) / A(n);
  } else {
    mean = blocked_sum<A>(n, [v](int64_t j) { return v[j]; }) / A(n);
    var = blocked_sum<A>(n, [v, mean](int64_t j) { A d = v[j] - mean; return d * d; }) / A(n);
  }
  rstd = A(1) / std::sqrt(var + eps);
}

}  // namespace bm::cpu
