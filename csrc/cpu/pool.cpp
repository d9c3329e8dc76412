// max_pool2d, avg_pool2d, adaptive_avg_pool2d on the CPU, any input and output strides.
//
// The kernels see a 4-D input (N, C, H, W) and the 4-D output (N, C, OH, OW) (core/ops_nn_pool.cpp
// checked the arguments and computed the shape). The N*C planes run in parallel. Each output row
// is made in two passes over a row buffer of the accumulation type:
//   1. vertical: the window's input rows are combined column by column into the buffer (unit
//      stride when the input's rows are contiguous, so the loop vectorises);
//   2. horizontal: each output element combines its window's columns of the buffer.
// Padding columns of the buffer hold the identity (-inf / lowest for max, 0 for sums) and never
// change, so the horizontal pass needs no bounds checks. Half types accumulate in float32.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"
#include "cpu/reduce_engine.h"
#include "cpu/simd.h"

namespace bm::cpu {

namespace {

// Geometry shared by the three kernels, element strides.
struct Geometry {
  int64_t N, C, H, W, OH, OW;
  int64_t in_n, in_c, in_h, in_w;
  int64_t out_n, out_c, out_h, out_w;
  explicit Geometry(const KernelCall& c) {
    const Tensor& x = *c.in[0];
    const Tensor& o = *c.out;
    N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], OH = o.shape[2], OW = o.shape[3];
    in_n = x.strides[0], in_c = x.strides[1], in_h = x.strides[2], in_w = x.strides[3];
    out_n = o.strides[0], out_c = o.strides[1], out_h = o.strides[2], out_w = o.strides[3];
  }
};

// Runs a copy of `proto` per parallel chunk (its buffers are the chunk's own) over the planes.
// `work` estimates the element operations per plane, to size the chunks.
template <typename T, typename Worker>
void for_each_plane(const KernelCall& c, const Geometry& g, int64_t work, const Worker& proto) {
  const T* x = c.in[0]->data<T>();
  T* y = c.out->data<T>();
  const int64_t planes = g.N * g.C;
  parallel_for(0, planes, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(work, 1)), [&](int64_t b, int64_t e) {
    Worker w = proto;
    w.init();
    int64_t n = b / g.C, ch = b % g.C;  // counted up below: no division per plane
    for (int64_t p = b; p < e; ++p) {
      w.plane(x + n * g.in_n + ch * g.in_c, y + n * g.out_n + ch * g.out_c);
      if (++ch == g.C) ch = 0, ++n;
    }
  });
}

// Adds (kMax: NaN-propagating max) input row `xr` (stride sw) into row[0..W).
template <bool kMax, typename A, typename T>
inline void combine_row(A* row, const T* xr, int64_t W, int64_t sw, bool first) {
  if (first) {
    if (sw == 1) for (int64_t w = 0; w < W; ++w) row[w] = A(xr[w]);
    else for (int64_t w = 0; w < W; ++w) row[w] = A(xr[w * sw]);
    return;
  }
  if constexpr (kMax) {
    if (sw == 1) for (int64_t w = 0; w < W; ++w) row[w] = Extreme<true>::comb(row[w], A(xr[w]));
    else for (int64_t w = 0; w < W; ++w) row[w] = Extreme<true>::comb(row[w], A(xr[w * sw]));
  } else {
    if (sw == 1) for (int64_t w = 0; w < W; ++w) row[w] += A(xr[w]);
    else for (int64_t w = 0; w < W; ++w) row[w] += A(xr[w * sw]);
  }
}

template <typename T>
struct MaxPool {
  // (bool is never registered, but compiled: it must not make a std::vector<bool>)
  using A = std::conditional_t<std::is_same_v<T, bool>, int32_t, acc_t<T>>;
  Geometry g;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  std::vector<A> buf;  // buf[pw + w]: column w's maximum over the window's rows

  static A lowest() {
    if constexpr (std::is_floating_point_v<A>) return -std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::lowest();
  }

  MaxPool(const KernelCall& c) : g(c) {
    const OpArgs& a = *c.args;
    kh = a.pool_kernel[0], kw = a.pool_kernel[1], sh = a.pool_stride[0], sw = a.pool_stride[1];
    ph = a.pool_padding[0], pw = a.pool_padding[1], dh = a.pool_dilation[0], dw = a.pool_dilation[1];
  }
  void init() { buf.assign(size_t(std::max(pw + g.W, (g.OW - 1) * sw + (kw - 1) * dw + 1)), lowest()); }

  void plane(const T* x, T* y) {
    A* row = buf.data() + pw;
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      const int64_t h0 = oh * sh - ph;
      bool first = true;
      for (int64_t i = 0; i < kh; ++i) {
        const int64_t h = h0 + i * dh;
        if (h < 0 || h >= g.H) continue;  // padding rows: -inf, which never wins
        combine_row<true>(row, x + h * g.in_h, g.W, g.in_w, first);
        first = false;
      }
      if (first) std::fill(row, row + g.W, lowest());  // dilation stepped over every input row
      T* yr = y + oh * g.out_h;
      if (kw == 3 && dw == 1 && sw == 2 && g.out_w == 1) {  // ResNet's stem pooling
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          const A* b = buf.data() + 2 * ow;
          yr[ow] = T(Extreme<true>::comb(Extreme<true>::comb(b[0], b[1]), b[2]));
        }
        continue;
      }
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        const A* b = buf.data() + ow * sw;
        A m = b[0];
        for (int64_t j = 1; j < kw; ++j) m = Extreme<true>::comb(m, b[j * dw]);
        yr[ow * g.out_w] = T(m);
      }
    }
  }
};

// Sums in a floating type: float for float32 and the half types, double for float64 (integer
// instantiations exist only because every dtype is compiled; they are never registered).
template <typename T>
using sum_t = std::conditional_t<std::is_floating_point_v<acc_t<T>>, acc_t<T>, double>;

template <typename T>
struct AvgPool {
  using A = sum_t<T>;
  Geometry g;
  int64_t kh, kw, sh, sw, ph, pw, divisor;
  bool include_pad;
  std::vector<A> buf;                 // buf[pw + w]: column w's sum over the window's rows
  std::vector<int64_t> wcount;        // per output column: the divisor's W factor
  std::vector<int64_t> wvalid;        // per output column: input columns inside the window

  AvgPool(const KernelCall& c) : g(c) {
    const OpArgs& a = *c.args;
    kh = a.pool_kernel[0], kw = a.pool_kernel[1], sh = a.pool_stride[0], sw = a.pool_stride[1];
    ph = a.pool_padding[0], pw = a.pool_padding[1], divisor = a.pool_divisor;
    include_pad = a.pool_count_include_pad;
  }
  // torch: the window is clipped to the padded input for the count with padding, and to the
  // input itself for the sum and the count without.
  static void extent(int64_t o, int64_t k, int64_t s, int64_t p, int64_t n, int64_t* padded, int64_t* valid) {
    const int64_t start = o * s - p, end = std::min(start + k, n + p);
    *padded = end - start;
    *valid = std::max<int64_t>(0, std::min(end, n) - std::max<int64_t>(start, 0));
  }
  void init() {
    buf.assign(size_t(std::max(pw + g.W, (g.OW - 1) * sw + kw)), A(0));
    wcount.resize(size_t(g.OW));
    wvalid.resize(size_t(g.OW));
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      int64_t padded, valid;
      extent(ow, kw, sw, pw, g.W, &padded, &valid);
      wcount[ow] = include_pad ? padded : valid;
      wvalid[ow] = valid;
    }
  }

  void plane(const T* x, T* y) {
    A* row = buf.data() + pw;
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      int64_t hpadded, hvalid;
      extent(oh, kh, sh, ph, g.H, &hpadded, &hvalid);
      const int64_t h0 = std::max<int64_t>(oh * sh - ph, 0);
      for (int64_t h = h0; h < h0 + hvalid; ++h) combine_row<false>(row, x + h * g.in_h, g.W, g.in_w, h == h0);
      T* yr = y + oh * g.out_h;
      const int64_t hc = include_pad ? hpadded : hvalid;
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        if (hvalid == 0 || wvalid[ow] == 0) {  // no input element in the window: torch writes 0
          yr[ow * g.out_w] = T(A(0));
          continue;
        }
        const A* b = buf.data() + ow * sw;
        A s = b[0];
        for (int64_t j = 1; j < kw; ++j) s += b[j];
        yr[ow * g.out_w] = T(s / A(divisor ? divisor : hc * wcount[ow]));
      }
    }
  }
};

// Sum of a contiguous float/double array: short ones (ResNet's 7x7 planes) in two vector
// accumulators with little setup, long ones pairwise (accuracy).
template <typename A>
A sum_contig(const A* x, int64_t n) {
  constexpr int L = kLanes<A>;
  if (n > 256) {
    const auto add = [](auto a, auto b) { return a + b; };
    return tree_reduce_contig<A>(x, n, A(0), add);
  }
  vec_t<A> a0 = vsplat<A>(0), a1 = a0;
  int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) a0 += vload<A>(x + i), a1 += vload<A>(x + i + L);
  if (i + L <= n) a0 += vload<A>(x + i), i += L;
  a0 += a1;
  A s = A(0);
  for (int l = 0; l < L; ++l) s += a0[l];
  for (; i < n; ++i) s += x[i];
  return s;
}

// Means of `count` runs of n contiguous floats, run p at x + p * xs, into y[p * ys] (global pooling
// of small contiguous planes: ResNet's 7x7 head). Sixteen lane sums held in 16 / lanes vectors V
// (4 x SSE or 2 x AVX), a halving tree (lane k += lane k + 8, then k + 4, ...), then the tail:
// the same additions in the same order for either V, so SSE2 and AVX2 builds give the same bits.
template <typename V>
__attribute__((always_inline)) inline void means_f32_body(const float* x, int64_t xs, int64_t n, float* y,
                                                          int64_t ys, int64_t count) {
  typedef float v4 __attribute__((vector_size(16)));
  constexpr int L = int(sizeof(V) / sizeof(float)), NV = 16 / L;
  for (int64_t p = 0; p < count; ++p) {
    const float* r = x + p * xs;
    V acc[NV] = {};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      for (int k = 0; k < NV; ++k) {
        V v;
        std::memcpy(&v, r + i + k * L, sizeof(V));
        acc[k] += v;
      }
    }
    float lanes[16];
    std::memcpy(lanes, acc, sizeof(lanes));
    v4 q[4];
    std::memcpy(q, lanes, sizeof(q));
    q[0] += q[2], q[1] += q[3];  // lanes k + 8
    q[0] += q[1];                // lanes k + 4
    float s = (q[0][0] + q[0][2]) + (q[0][1] + q[0][3]);
    for (; i < n; ++i) s += r[i];
    y[p * ys] = s / float(n);
  }
}
constexpr int64_t kMeansMax = 1024;  // longer runs use the pairwise sum, for accuracy

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) void means_f32_avx2(const float* x, int64_t xs, int64_t n, float* y, int64_t ys,
                                                    int64_t count) {
  typedef float v8 __attribute__((vector_size(32)));
  means_f32_body<v8>(x, xs, n, y, ys, count);
}
#endif

void means_f32(const float* x, int64_t xs, int64_t n, float* y, int64_t ys, int64_t count) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return means_f32_avx2(x, xs, n, y, ys, count);
#endif
  means_f32_body<vec_t<float>>(x, xs, n, y, ys, count);
}

// Window [floor(i * n / out), ceil((i + 1) * n / out)) along one dim, as torch computes it.
inline int64_t adaptive_start(int64_t i, int64_t n, int64_t out) { return i * n / out; }
inline int64_t adaptive_end(int64_t i, int64_t n, int64_t out) { return ((i + 1) * n + out - 1) / out; }

template <typename T>
struct AdaptiveAvgPool {
  using A = sum_t<T>;
  Geometry g;
  std::vector<A> row;                 // column sums over the window's rows
  std::vector<int64_t> ws, we;        // per output column: the window's columns

  AdaptiveAvgPool(const KernelCall& c) : g(c) {}
  void init() {
    row.resize(size_t(g.W));
    ws.resize(size_t(g.OW));
    we.resize(size_t(g.OW));
    for (int64_t ow = 0; ow < g.OW; ++ow) ws[ow] = adaptive_start(ow, g.W, g.OW), we[ow] = adaptive_end(ow, g.W, g.OW);
  }

  void plane(const T* x, T* y) {
    if constexpr (std::is_same_v<T, A>) {
      // Global pooling of a contiguous plane (ResNet's head): one vectorised pairwise sum.
      if (g.OH == 1 && g.OW == 1 && g.in_w == 1 && g.in_h == g.W) {
        *y = sum_contig(x, g.H * g.W) / A(g.H * g.W);
        return;
      }
    }
    for (int64_t oh = 0; oh < g.OH; ++oh) {
      const int64_t hs = adaptive_start(oh, g.H, g.OH), he = adaptive_end(oh, g.H, g.OH);
      for (int64_t h = hs; h < he; ++h) combine_row<false>(row.data(), x + h * g.in_h, g.W, g.in_w, h == hs);
      T* yr = y + oh * g.out_h;
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        A s = A(0);
        for (int64_t w = ws[ow]; w < we[ow]; ++w) s += row[w];
        yr[ow * g.out_w] = T(s / A((he - hs) * (we[ow] - ws[ow])));
      }
    }
  }
};

template <typename T>
struct MaxPoolKernel {
  static void run(const KernelCall& c) {
    MaxPool<T> k(c);
    for_each_plane<T>(c, k.g, k.g.OH * (k.kh * k.g.W + k.kw * k.g.OW), k);
  }
};
template <typename T>
struct AvgPoolKernel {
  static void run(const KernelCall& c) {
    AvgPool<T> k(c);
    for_each_plane<T>(c, k.g, k.g.OH * (k.kh * k.g.W + k.kw * k.g.OW), k);
  }
};
template <typename T>
struct AdaptiveAvgPoolKernel {
  static void run(const KernelCall& c) {
    AdaptiveAvgPool<T> k(c);
    const Geometry& g = k.g;
    if constexpr (std::is_same_v<T, float>) {
      // Global pooling of contiguous planes spaced evenly: all planes in one strided loop.
      const int64_t xs = g.C == 1 ? g.in_n : g.in_c, ys = g.C == 1 ? g.out_n : g.out_c, n = g.H * g.W;
      if (g.OH == 1 && g.OW == 1 && g.in_w == 1 && g.in_h == g.W && n <= kMeansMax &&
          (g.N == 1 || (g.in_n == g.C * xs && g.out_n == g.C * ys))) {
        const float* x = c.in[0]->data<float>();
        float* y = c.out->data<float>();
        parallel_for(0, g.N * g.C, std::max<int64_t>(1, kParallelGrain / n),
                     [&](int64_t b, int64_t e) { means_f32(x + b * xs, xs, n, y + b * ys, ys, e - b); });
        return;
      }
    }
    for_each_plane<T>(c, g, g.OH * g.W + g.H * g.W, k);
  }
};

}  // namespace

void register_pool_kernels(Backend& b) {
  register_for_row<MaxPoolKernel>(b, OpId::max_pool2d);
  register_for_row<AvgPoolKernel>(b, OpId::avg_pool2d);
  register_for_row<AdaptiveAvgPoolKernel>(b, OpId::adaptive_avg_pool2d);
}

}  // namespace bm::cpu
