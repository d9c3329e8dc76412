// softmax_backward and log_softmax_backward along args->dim, any strides (grad, the forward's
// output y and the result each have their own). Per slice along dim:
//   softmax      s = sum(g * y), out = y * (g - s)
//   log_softmax  s = sum(g),     out = g - exp(y) * s
// in acc_t<T> (float for the half types, rounded once on store); exp is bm_exp_f32 for float
// (activation_f32's vector loop), the formula the shaders use (shaders/softmax_backward.metal computes the same per-element
// expressions). Row mode (the dim is the closest in memory): slices in parallel, each summed with
// 8 accumulators over blocks of 1024 (norm_rows.h). Column mode (another dim is closer): blocks
// of neighbouring slices side by side, summed in order along the dim.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "cpu/elementwise.h"
#include "cpu/activation_f32.h"
#include "cpu/kernels.h"
#include "cpu/norm_rows.h"

namespace bm::cpu {

namespace {

// The dims other than the softmax dim, size-1 dims dropped, merged where all three tensors allow;
// element strides of grad, y, out.
struct SliceDims {
  std::vector<int64_t> size;
  std::vector<std::array<int64_t, 3>> st;
};

SliceDims slice_dims(const std::array<const Tensor*, 3>& ts, int64_t dim) {
  SliceDims r;
  const Tensor& t0 = *ts[0];
  for (int64_t d = 0; d < t0.ndim(); ++d) {
    const int64_t n = t0.shape[size_t(d)];
    if (d == dim || n == 1) continue;
    bool merge = !r.size.empty();
    for (int k = 0; k < 3 && merge; ++k) merge = r.st.back()[k] == ts[k]->strides[size_t(d)] * n;
    if (merge) {
      r.size.back() *= n;
      for (int k = 0; k < 3; ++k) r.st.back()[k] = ts[k]->strides[size_t(d)];
    } else {
      r.size.push_back(n);
      r.st.push_back({ts[0]->strides[size_t(d)], ts[1]->strides[size_t(d)], ts[2]->strides[size_t(d)]});
    }
  }
  return r;
}

template <typename T, bool kLog>
void softmax_backward_impl(const KernelCall& c) {
  using A = acc_t<T>;
  const std::array<const Tensor*, 3> ts{c.in[0], c.in[1], c.out};
  const int64_t dim = c.args->dim, nd = c.out->ndim();
  const int64_t L = nd == 0 ? 1 : c.out->shape[size_t(dim)];
  std::array<int64_t, 3> along{0, 0, 0};
  if (nd > 0)
    for (int k = 0; k < 3; ++k) along[k] = ts[k]->strides[size_t(dim)];
  const SliceDims sd = slice_dims(ts, dim);
  int64_t rows = 1;
  for (int64_t s : sd.size) rows *= s;
  // the result from the slice's sum s, as shaders/softmax_backward.metal computes it; for
  // log_softmax y is already exp(y) (exp_in_place, on the gathered buffer)
  auto value = [](A g, A y, A s) -> A {
    if constexpr (!kLog) return y * (g - s);
    else return g - y * s;
  };
  // float32 through the vector loop (bm_exp_f32's bits; a scalar call would use libm's fma)
  auto exp_in_place = [](A* y, int64_t n) {
    if constexpr (!kLog) return;
    else if constexpr (std::is_same_v<A, float>) activation_f32(Act::exp, y, y, n);
    else for (int64_t j = 0; j < n; ++j) y[j] = std::exp(y[j]);
  };
  const T* gb = c.in[0]->data<T>();
  const T* yb = c.in[1]->data<T>();
  T* ob = c.out->data<T>();

  // Column mode: another dim is closer in memory than the softmax dim (e.g. dim 1 of NCHW). Blocks
  // of wb neighbouring slices are gathered side by side, so every pass runs along memory.
  if (L > 1 && !sd.size.empty() && sd.size.back() > 1 && std::llabs(sd.st.back()[1]) < std::llabs(along[1])) {
    const int64_t W = sd.size.back(), wb = std::min<int64_t>(W, std::max<int64_t>(16, std::min<int64_t>(256, 65536 / L)));
    const int64_t nblk = (W + wb - 1) / wb, outer = rows / W;
    const std::array<int64_t, 3> inner = sd.st.back();
    parallel_for(0, outer * nblk, std::max<int64_t>(1, kParallelGrain / (L * wb)), [&](int64_t b0, int64_t b1) {
      std::vector<A> gv(static_cast<size_t>(L * wb)), yv(static_cast<size_t>(L * wb)), sum(static_cast<size_t>(wb));
      for (int64_t it = b0; it < b1; ++it) {
        const int64_t j0 = (it % nblk) * wb, w = std::min(wb, W - j0);
        std::array<int64_t, 3> off{0, 0, 0};
        for (size_t d = sd.size.size() - 1, rest = size_t(it / nblk); d-- > 0;) {
          const int64_t i = int64_t(rest % size_t(sd.size[d]));
          rest /= size_t(sd.size[d]);
          for (int k = 0; k < 3; ++k) off[k] += i * sd.st[d][k];
        }
        for (int k = 0; k < 3; ++k) off[k] += j0 * inner[k];
        std::fill(sum.begin(), sum.end(), A(0));
        for (int64_t l = 0; l < L; ++l) {
          const T* gp = gb + off[0] + l * along[0];
          const T* yp = yb + off[1] + l * along[1];
          A* gr = gv.data() + l * wb;
          A* yr = yv.data() + l * wb;
          for (int64_t j = 0; j < w; ++j) {
            gr[j] = A(gp[j * inner[0]]);
            yr[j] = A(yp[j * inner[1]]);
            sum[size_t(j)] += kLog ? gr[j] : gr[j] * yr[j];
          }
          exp_in_place(yr, w);
        }
        for (int64_t l = 0; l < L; ++l) {
          T* op = ob + off[2] + l * along[2];
          const A* gr = gv.data() + l * wb;
          const A* yr = yv.data() + l * wb;
          for (int64_t j = 0; j < w; ++j) op[j * inner[2]] = T(value(gr[j], yr[j], sum[size_t(j)]));
        }
      }
    });
    return;
  }

  parallel_for(0, rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(L, 1)), [&](int64_t r0, int64_t r1) {
    std::vector<A> gv(static_cast<size_t>(L)), yv(static_cast<size_t>(L));
    for (int64_t r = r0; r < r1; ++r) {
      std::array<int64_t, 3> off{0, 0, 0};
      for (size_t d = sd.size.size(), rest = size_t(r); d-- > 0;) {
        const int64_t i = int64_t(rest % size_t(sd.size[d]));
        rest /= size_t(sd.size[d]);
        for (int k = 0; k < 3; ++k) off[k] += i * sd.st[d][k];
      }
      const T* gp = gb + off[0];
      const T* yp = yb + off[1];
      T* op = ob + off[2];
      for (int64_t j = 0; j < L; ++j) {
        gv[size_t(j)] = A(gp[j * along[0]]);
        yv[size_t(j)] = A(yp[j * along[1]]);
      }
      const A* g = gv.data();
      const A* y = yv.data();
      A s;
      if constexpr (kLog) s = blocked_sum<A>(L, [g](int64_t j) { return g[j]; });
      else s = blocked_sum<A>(L, [g, y](int64_t j) { return g[j] * y[j]; });
      exp_in_place(yv.data(), L);
      for (int64_t j = 0; j < L; ++j) op[j * along[2]] = T(value(g[j], y[j], s));
    }
  });
}

template <typename T>
struct SoftmaxBackwardKernel {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(OpId::softmax_backward)) softmax_backward_impl<T, false>(c);
    else no_kernel("softmax_backward");
  }
};
template <typename T>
struct LogSoftmaxBackwardKernel {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(OpId::log_softmax_backward)) softmax_backward_impl<T, true>(c);
    else no_kernel("log_softmax_backward");
  }
};

}  // namespace

void register_softmax_backward_kernels(Backend& b) {
  register_for_row<SoftmaxBackwardKernel>(b, OpId::softmax_backward);
  register_for_row<LogSoftmaxBackwardKernel>(b, OpId::log_softmax_backward);
}

}  // namespace bm::cpu
