// Iteration plan shared by the CPU reduction kernels (reduce.cpp, reduce_arg.cpp).
//
// The dispatcher hands a reduction kernel the input and an output with the KEEPDIM shape. We split
// the input dims into kept dims (present in the output) and reduced dims, drop size-1 dims, order
// each list by decreasing input stride and merge dims whose strides allow it. Which loop goes
// innermost is then decided by strides, as numpy does:
//   inner mode  - the smallest-stride dim is reduced: each output reduces runs along memory
//                 (sum over the last axis of a C-contiguous array);
//   column mode - the smallest-stride dim is kept: rows of the input are accumulated into a block
//                 of outputs (sum over the first axis), so the inner loop still walks memory.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/tensor.h"

namespace bm::cpu {

struct RDim {
  int64_t size;
  int64_t in_st;   // input byte stride
  int64_t out_st;  // output byte stride (kept dims only)
};

// Walks the element offsets of a list of dims in row-major order (last dim fastest). Index storage
// is inline for up to 16 dims: inner loops construct one per output.
struct Odometer {
  const std::vector<RDim>* dims;
  int64_t inline_idx[16];
  std::vector<int64_t> heap_idx;
  int64_t* idx;
  int64_t in_off = 0, out_off = 0;

  explicit Odometer(const std::vector<RDim>& d) : dims(&d) {
    if (d.size() > 16) heap_idx.resize(d.size());
    idx = d.size() > 16 ? heap_idx.data() : inline_idx;
    for (size_t k = 0; k < d.size(); ++k) idx[k] = 0;
  }
  Odometer(const Odometer&) = delete;
  Odometer& operator=(const Odometer&) = delete;

  void seek(int64_t lin) {
    in_off = out_off = 0;
    for (size_t k = dims->size(); k-- > 0;) {
      const RDim& d = (*dims)[k];
      idx[k] = lin % d.size;
      lin /= d.size;
      in_off += idx[k] * d.in_st;
      out_off += idx[k] * d.out_st;
    }
  }
  void next() {
    for (size_t k = dims->size(); k-- > 0;) {
      const RDim& d = (*dims)[k];
      in_off += d.in_st;
      out_off += d.out_st;
      if (++idx[k] < d.size) return;
      in_off -= d.size * d.in_st;
      out_off -= d.size * d.out_st;
      idx[k] = 0;
    }
  }
};

struct ReducePlan {
  std::vector<RDim> kept;  // never empty; kept.back() is the kept dim with the smallest stride
  std::vector<RDim> red;   // never empty; red.back() is the inner reduced run
  int64_t n_out = 1;       // number of outputs
  int64_t n_red = 1;       // elements reduced into each output (size-1 dims included)
  bool column = false;     // column mode (see above)
  const char* in = nullptr;
  char* out = nullptr;

  // logical_red: keep reduced dims in their logical order (argmax numbers reduced elements
  // row-major), only merging dims that are contiguous in that order.
  ReducePlan(const Tensor& x, Tensor& o, bool logical_red = false) {
    in = x.bytes();
    out = o.bytes();
    const int64_t isz = int64_t(itemsize(x.dtype)), osz = int64_t(itemsize(o.dtype));
    for (size_t d = 0; d < x.shape.size(); ++d) {
      const int64_t n = x.shape[d];
      const bool reduced = o.shape[d] == 1;
      if (reduced) n_red *= n;
      if (n == 1) continue;
      RDim r{n, x.strides[d] * isz, reduced ? 0 : o.strides[d] * osz};
      (reduced ? red : kept).push_back(r);
    }
    auto by_stride = [](const RDim& a, const RDim& b) { return std::llabs(a.in_st) > std::llabs(b.in_st); };
    std::stable_sort(kept.begin(), kept.end(), by_stride);
    if (!logical_red) std::stable_sort(red.begin(), red.end(), by_stride);
    merge(kept, true);
    merge(red, false);
    if (kept.empty()) kept.push_back({1, 0, 0});
    if (red.empty()) red.push_back({1, 0, 0});
    for (const RDim& d : kept) n_out *= d.size;
    const RDim &ki = kept.back(), &ri = red.back();
    column = ki.size > 1 && ri.size > 1 ? std::llabs(ki.in_st) < std::llabs(ri.in_st) : ki.size > 1;
  }

  // Elements of the inner reduced run and the number of such runs per output.
  int64_t run_len() const { return red.back().size; }
  int64_t runs() const { return n_red / red.back().size; }

 private:
  static void merge(std::vector<RDim>& dims, bool with_out) {
    std::vector<RDim> m;
    for (const RDim& d : dims) {
      if (!m.empty() && m.back().in_st == d.in_st * d.size && (!with_out || m.back().out_st == d.out_st * d.size)) {
        m.back().size *= d.size;
        m.back().in_st = d.in_st;
        m.back().out_st = d.out_st;
      } else {
        m.push_back(d);
      }
    }
    dims.swap(m);
  }
};

// Outer reduced dims (all but the inner run): their odometer dims.
inline std::vector<RDim> outer_red_dims(const ReducePlan& p) { return {p.red.begin(), p.red.end() - 1}; }
inline std::vector<RDim> outer_kept_dims(const ReducePlan& p) { return {p.kept.begin(), p.kept.end() - 1}; }

}  // namespace bm::cpu
