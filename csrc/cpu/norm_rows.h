// Row helpers of the normalisation kernels (norm.cpp, norm_backward.cpp): a tensor's leading or
// trailing dims as one run of merged dims, offsets along it, and a blocked sum.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/tensor.h"

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

}  // namespace bm::cpu
