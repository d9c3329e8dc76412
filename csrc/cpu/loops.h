// Strided iteration shared by the CPU kernels. Operands have one shape (the dispatcher broadcasts
// them first) and arbitrary element strides; dims are coalesced where every operand allows it, and
// the innermost run goes to a functor that can take a contiguous fast path.
#pragma once
#include <algorithm>
#include <array>
#include <cstdlib>
#include <vector>

#include "core/parallel.h"
#include "core/tensor.h"

namespace bm::cpu {

constexpr int64_t kParallelGrain = 32768;  // elements per chunk before a second thread helps

// Asks for the first `bytes` of p (at most 4 KiB) to come into the cache, a line at a time. Gathers
// (embedding, index_select) issue it for the next row while copying this one: rows at random places
// in a table far larger than the caches would otherwise each begin with a wait on memory.
inline void prefetch_row(const void* p, int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  const int64_t n = std::min<int64_t>(bytes, 4096);
  for (int64_t b = 0; b < n; b += 64) __builtin_prefetch(c + b);
}

template <int N>
struct StridedPlan {
  Shape shape;                      // coalesced; innermost last; at least 1 dim
  std::array<Shape, N> bstrides;    // byte strides per operand
  std::array<char*, N> base;

  // logical_order: visit elements in row-major logical order (kernels that use the linear index,
  // like the random fills). Otherwise dims are reordered so the innermost loop runs over the
  // smallest strides (operand 0 first, the output), which is what keeps transposed inputs fast.
  explicit StridedPlan(const std::array<const Tensor*, N>& ts, bool logical_order = false) {
    const Shape& s = ts[0]->shape;
    for (int k = 0; k < N; ++k) base[k] = ts[k]->bytes();
    // Drop size-1 dims, then merge dim i into i+1 when every operand is contiguous across them.
    std::vector<int64_t> keep;
    for (size_t d = 0; d < s.size(); ++d)
      if (s[d] != 1) keep.push_back(int64_t(d));
    if (!logical_order) {
      // +1: dim a (now outside b) belongs inside b; -1: it stays outside; 0: no operand can tell
      // (zero or equal strides), so the insertion sort looks further out instead of stopping.
      auto order = [&](int64_t a, int64_t b) {
        for (int k = 0; k < N; ++k) {
          int64_t sa = std::abs(ts[k]->strides[a]), sb = std::abs(ts[k]->strides[b]);
          if (sa == 0 || sb == 0 || sa == sb) continue;
          return sa < sb ? 1 : -1;
        }
        return 0;
      };
      for (size_t i = 1; i < keep.size(); ++i) {
        size_t d1 = i;
        for (size_t d0 = i; d0-- > 0;) {
          int c = order(keep[d0], keep[d1]);
          if (c > 0) { std::swap(keep[d0], keep[d1]); d1 = d0; }
          else if (c < 0) break;
        }
      }
    }
    for (int64_t d : keep) {
      bool merge = !shape.empty();
      for (int k = 0; k < N && merge; ++k) {
        int64_t st = ts[k]->strides[d] * int64_t(itemsize(ts[k]->dtype));
        merge = bstrides[k].back() == st * s[d];
      }
      if (merge) {
        shape.back() *= s[d];
        for (int k = 0; k < N; ++k) bstrides[k].back() = ts[k]->strides[d] * int64_t(itemsize(ts[k]->dtype));
      } else {
        shape.push_back(s[d]);
        for (int k = 0; k < N; ++k) bstrides[k].push_back(ts[k]->strides[d] * int64_t(itemsize(ts[k]->dtype)));
      }
    }
    if (shape.empty()) {
      shape.push_back(1);
      for (int k = 0; k < N; ++k) bstrides[k].push_back(0);
    }
  }

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }

  // Calls row(ptrs, inner_byte_strides, count) for the linear element range [begin, end).
  template <typename Row>
  void run_range(int64_t begin, int64_t end, Row&& row) const {
    const int nd = int(shape.size());
    const int64_t inner = shape[nd - 1];
    std::vector<int64_t> idx(nd, 0);
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; --d) { idx[d] = rem % shape[d]; rem /= shape[d]; }
    std::array<int64_t, N> istride;
    for (int k = 0; k < N; ++k) istride[k] = bstrides[k][nd - 1];
    int64_t pos = begin;
    while (pos < end) {
      std::array<char*, N> p;
      for (int k = 0; k < N; ++k) {
        int64_t off = 0;
        for (int d = 0; d < nd; ++d) off += idx[d] * bstrides[k][d];
        p[k] = base[k] + off;
      }
      int64_t count = std::min(inner - idx[nd - 1], end - pos);
      row(p, istride, count);
      pos += count;
      idx[nd - 1] += count;
      for (int d = nd - 1; d > 0 && idx[d] >= shape[d]; --d) { idx[d] = 0; ++idx[d - 1]; }
    }
  }

  template <typename Row>
  void run(Row&& row, int64_t grain = kParallelGrain) const {
    parallel_for(0, numel(), grain, [&](int64_t b, int64_t e) { run_range(b, e, row); });
  }
};

}  // namespace bm::cpu
