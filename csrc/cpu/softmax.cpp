// softmax and log_softmax along args->dim, any strides.
//
// Numerically stable: every slice subtracts its maximum before exp, so large logits cannot
// overflow; half types compute in float32 and round once on store. The exp-sum is pairwise, and
// float32's exp is bm_exp_f32 (shaders/bm_exp_f32.h), run in vector loops (AVX2 / AVX-512 where
// present, the same bits everywhere).
// Row mode (the softmax dim has the smallest input stride): slices in parallel, each worked on in
// place when contiguous float/double, else through a buffer of acc_t. Column mode (another dim is
// closer in memory): blocks of slices are gathered side by side so every pass is a unit-stride loop.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "cpu/activation_f32.h"
#include "cpu/softmax_rows.h"
#include "cpu/kernels.h"
#include "cpu/reduce_engine.h"
#include "cpu/simd.h"

namespace bm::cpu {

namespace {

template <typename T, bool kLog>
struct Softmax {
  using A = std::conditional_t<std::is_floating_point_v<acc_t<T>>, acc_t<T>, double>;

  // max that propagates NaN (a NaN slice gives NaN everywhere, as in torch)
  static A max_nan(A a, A b) { return Extreme<true>::comb(a, b); }
  static A load(const char* p) { return A(*reinterpret_cast<const T*>(p)); }
  static void put(char* p, A v) { *reinterpret_cast<T*>(p) = T(v); }

  static void run(const KernelCall& c) {
    const Tensor& x = *c.in[0];
    Tensor& o = *c.out;
    const int64_t isz = int64_t(sizeof(T));
    int64_t L = 1, sx = 0, so = 0;
    std::vector<RDim> rows;  // the other dims: one slice per index
    for (int64_t d = 0; d < x.ndim(); ++d) {
      if (d == c.args->dim) {
        L = x.shape[d], sx = x.strides[d] * isz, so = o.strides[d] * isz;
      } else if (x.shape[d] != 1) {
        rows.push_back({x.shape[d], x.strides[d] * isz, o.strides[d] * isz});
      }
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const RDim& a, const RDim& b) { return std::llabs(a.in_st) > std::llabs(b.in_st); });
    std::vector<RDim> merged;
    for (const RDim& d : rows) {
      if (!merged.empty() && merged.back().in_st == d.in_st * d.size && merged.back().out_st == d.out_st * d.size) {
        merged.back() = {merged.back().size * d.size, d.in_st, d.out_st};
      } else {
        merged.push_back(d);
      }
    }
    if (merged.empty()) merged.push_back({1, 0, 0});
    const RDim& inner = merged.back();
    if (L > 1 && inner.size > 1 && std::llabs(inner.in_st) < std::llabs(sx))
      column_mode(x.bytes(), o.bytes(), merged, L, sx, so);
    else
      row_mode(x.bytes(), o.bytes(), merged, L, sx, so);
  }

  static void row_mode(const char* in, char* out, const std::vector<RDim>& rows, int64_t L, int64_t sx, int64_t so) {
    int64_t n = 1;
    for (const RDim& d : rows) n *= d.size;
    // float/double slices that are contiguous are read and written in place; others go through
    // buffers of A (gather and convert in, round and scatter out).
    constexpr bool kSame = std::is_same_v<T, A>;
    const bool direct_in = kSame && sx == int64_t(sizeof(T)), direct_out = kSame && so == int64_t(sizeof(T));
    parallel_for(0, n, std::max<int64_t>(1, kReduceGrain / (4 * L)), [&](int64_t b, int64_t e) {
      std::vector<A> buf(static_cast<size_t>(2 * L));
      Odometer od(rows);
      od.seek(b);
      auto add = [](auto a, auto b2) { return a + b2; };
      auto mxc = [](auto a, auto b2) { return Extreme<true>::comb(a, b2); };
      for (int64_t r = b; r < e; ++r, od.next()) {
        const char* xi = in + od.in_off;
        char* yo = out + od.out_off;
        const A* v = direct_in ? reinterpret_cast<const A*>(xi) : buf.data();
        A* y = direct_out ? reinterpret_cast<A*>(yo) : buf.data() + L;
        if (!direct_in) {
          A* g = buf.data();
          if (sx == int64_t(sizeof(T))) {
            const T* xp = reinterpret_cast<const T*>(xi);
            for (int64_t i = 0; i < L; ++i) g[i] = A(xp[i]);
          } else {
            for (int64_t i = 0; i < L; ++i) g[i] = load(xi + i * sx);
          }
        }
        if constexpr (std::is_same_v<A, float>) {
          // float32 (and half types, through the buffer): fused vectorised passes, max, then
          // exp + store + sum in one sweep, then one scale (softmax) or subtract (log_softmax)
          const float mx = max_f32(v, L);
          if constexpr (kLog) {
            const float s = exp_shifted_sum_f32(v, mx, nullptr, L);
            sub2_f32(v, mx, std::log(s), y, L);
          } else {
            const float s = exp_shifted_sum_f32(v, mx, y, L);
            scale_f32(y, 1.0f / s, L);  // as torch: one reciprocal, then multiplies
          }
        } else {  // double: the same passes in scalar code
          const A mx = tree_reduce_contig<A>(v, L, v[0], mxc);
          // softmax keeps exp(x - max) in y; log_softmax only needs their sum (scratch, so that an
          // output sharing memory with the input still reads x below)
          A* ex_to = kLog && direct_out ? buf.data() + L : y;
          for (int64_t i = 0; i < L; ++i) ex_to[i] = std::exp(v[i] - mx);
          const A s = tree_reduce_contig<A>(ex_to, L, A(0), add);
          if constexpr (kLog) {
            const A ls = std::log(s);
            for (int64_t i = 0; i < L; ++i) y[i] = (v[i] - mx) - ls;
          } else {
            const A inv = A(1) / s;  // as torch: one reciprocal, then multiplies
            for (int64_t i = 0; i < L; ++i) y[i] = y[i] * inv;
          }
        }
        if (!direct_out) {
          if (so == int64_t(sizeof(T))) {
            T* yp = reinterpret_cast<T*>(yo);
            for (int64_t i = 0; i < L; ++i) yp[i] = T(y[i]);
          } else {
            for (int64_t i = 0; i < L; ++i) put(yo + i * so, y[i]);
          }
        }
      }
    });
  }

  // A block of wb slices is gathered into buf (L x wb, contiguous A), so every pass below is a
  // unit-stride loop over the block that the compiler vectorises.
  static void column_mode(const char* in, char* out, const std::vector<RDim>& rows, int64_t L, int64_t sx, int64_t so) {
    const RDim& ki = rows.back();
    const std::vector<RDim> outer(rows.begin(), rows.end() - 1);
    const int64_t W = ki.size, MO = [&] { int64_t m = 1; for (const RDim& d : outer) m *= d.size; return m; }();
    const int64_t wb = std::min<int64_t>(W, std::max<int64_t>(16, std::min<int64_t>(256, 65536 / L)));
    const int64_t nblk = (W + wb - 1) / wb;
    const bool unit_in = ki.in_st == int64_t(sizeof(T)), unit_out = ki.out_st == int64_t(sizeof(T));
    parallel_for(0, MO * nblk, std::max<int64_t>(1, kReduceGrain / (4 * L * wb)), [&](int64_t b, int64_t e) {
      std::vector<A> buf(static_cast<size_t>(L * wb)), mx(static_cast<size_t>(wb)), sum(static_cast<size_t>(wb)),
          blk(static_cast<size_t>(wb)), tmp(static_cast<size_t>(kLog ? wb : 0));  // tmp: log_softmax's exps
      Odometer od(outer);
      for (int64_t it = b; it < e; ++it) {
        const int64_t j0 = (it % nblk) * wb, w = std::min(wb, W - j0);
        od.seek(it / nblk);
        const char* xi = in + od.in_off + j0 * ki.in_st;
        char* yo = out + od.out_off + j0 * ki.out_st;
        for (int64_t k = 0; k < L; ++k) {
          A* v = buf.data() + k * wb;
          const char* row = xi + k * sx;
          if (unit_in) {
            const T* xp = reinterpret_cast<const T*>(row);
            for (int64_t j = 0; j < w; ++j) v[j] = A(xp[j]);
          } else {
            for (int64_t j = 0; j < w; ++j) v[j] = load(row + j * ki.in_st);
          }
        }
        std::copy(buf.begin(), buf.begin() + w, mx.begin());
        for (int64_t k = 1; k < L; ++k) {
          const A* v = buf.data() + k * wb;
          for (int64_t j = 0; j < w; ++j) mx[j] = max_nan(mx[j], v[j]);
        }
        // exp-sums in blocks of kRowBlock slices, for accuracy on long dims; softmax keeps the exps
        std::fill(sum.begin(), sum.end(), A(0));
        for (int64_t k0 = 0; k0 < L; k0 += kRowBlock) {
          std::fill(blk.begin(), blk.end(), A(0));
          for (int64_t k = k0; k < std::min(L, k0 + kRowBlock); ++k) {
            A* v = buf.data() + k * wb;
            if constexpr (std::is_same_v<A, float>) {
              // exp through the vector loop (scalar bm_exp_f32 would call libm's fma on this target);
              // log_softmax keeps x in v and takes the exps in scratch
              A* ev = kLog ? tmp.data() : v;
              for (int64_t j = 0; j < w; ++j) ev[j] = v[j] - mx[j];
              activation_f32(Act::exp, ev, ev, w);
              for (int64_t j = 0; j < w; ++j) blk[j] += ev[j];
            } else {
              for (int64_t j = 0; j < w; ++j) {
                const A ev = std::exp(v[j] - mx[j]);
                blk[j] += ev;
                if constexpr (!kLog) v[j] = ev;
              }
            }
          }
          for (int64_t j = 0; j < w; ++j) sum[j] += blk[j];
        }
        for (int64_t j = 0; j < w; ++j) sum[j] = kLog ? std::log(sum[j]) : A(1) / sum[j];
        for (int64_t k = 0; k < L; ++k) {
          A* v = buf.data() + k * wb;
          for (int64_t j = 0; j < w; ++j) v[j] = kLog ? (v[j] - mx[j]) - sum[j] : v[j] * sum[j];
          char* row = yo + k * so;
          if (unit_out) {
            T* yp = reinterpret_cast<T*>(row);
            for (int64_t j = 0; j < w; ++j) yp[j] = T(v[j]);
          } else {
            for (int64_t j = 0; j < w; ++j) put(row + j * ki.out_st, v[j]);
          }
        }
      }
    });
  }
};

template <typename T>
struct SoftmaxKernel {
  static void run(const KernelCall& c) { Softmax<T, false>::run(c); }
};
template <typename T>
struct LogSoftmaxKernel {
  static void run(const KernelCall& c) { Softmax<T, true>::run(c); }
};

}  // namespace

void register_softmax_kernels(Backend& b) {
  register_for_row<SoftmaxKernel>(b, OpId::softmax);
  register_for_row<LogSoftmaxKernel>(b, OpId::log_softmax);
}

}  // namespace bm::cpu
