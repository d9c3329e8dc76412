// max_pool2d_with_indices and the pooling gradients on the CPU, any input and output strides.
//
//   max_pool2d_with_indices   x (N, C, H, W) -> int64 (N, C, OH, OW): torch's index (h * W + w in
//                             the plane) of each window's maximum, found as torch's CPU kernel
//                             does: the first maximum in row-major window order, a NaN replacing
//                             it (so the last NaN wins), the first tap's index when no value is
//                             greater than -inf (or the lowest integer);
//   max_pool2d_backward       (grad (N, C, OH, OW), int64 indices) -> grad of x (N, C, H, W);
//   avg_pool2d_backward       grad -> grad of x;
//   adaptive_avg_pool2d_backward  grad -> grad of x.
// The gradients gather: each input element loops over the windows that cover it, rows then
// columns ascending, and sums (in float for the half types) the gradients that reach it: from a
// max window whose index names it, from an average window its gradient over the window's divisor.
// No atomics, no scatter: the same order as shaders/pool_backward.metal, run to run.
// The N * C planes run in parallel.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/errors.h"
#include "core/parallel.h"
#include "cpu/convert.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"

namespace bm::cpu {

namespace {

// Shapes and element strides: `in` the kernel's first input, `out` its output.
struct Planes {
  int64_t N, C;
  int64_t in_h, in_w, out_h, out_w;  // sizes
  int64_t is[4], os[4];              // strides
  explicit Planes(const KernelCall& c) {
    const Tensor &x = *c.in[0], &o = *c.out;
    N = x.shape[0], C = x.shape[1], in_h = x.shape[2], in_w = x.shape[3], out_h = o.shape[2], out_w = o.shape[3];
    for (int d = 0; d < 4; ++d) is[d] = x.strides[d], os[d] = o.strides[d];
  }
};

// fn(n, c) for every plane, planes in parallel; `work`: element operations per plane.
template <typename Fn>
void for_planes(const Planes& p, int64_t work, const Fn& fn) {
  parallel_for(0, p.N * p.C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(work, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t q = b; q < e; ++q) fn(q / p.C, q % p.C);
               });
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

// Windows o in [0, out) covering input position i along one dim: o * stride - pad <= i <=
// o * stride - pad + span (span = (kernel - 1) * dilation): [*lo, *hi).
void covering(int64_t i, int64_t out, int64_t stride, int64_t pad, int64_t span, int64_t* lo, int64_t* hi) {
  *lo = std::max<int64_t>(0, floor_div(i + pad - span + stride - 1, stride));
  *hi = std::min<int64_t>(out, floor_div(i + pad, stride) + 1);
}

template <typename T>
struct MaxIndexKernel {
  static void run(const KernelCall& c) {
    if constexpr (std::is_same_v<T, bool>) {
      throw UnsupportedError("[max_pool2d_with_indices] bool inputs have no kernel");  // excluded by the row mask
    } else {
      using A = acc_t<T>;
      const Planes p(c);
      const OpArgs& a = *c.args;
      const int64_t kh = a.pool_kernel[0], kw = a.pool_kernel[1], sh = a.pool_stride[0], sw = a.pool_stride[1];
      const int64_t ph = a.pool_padding[0], pw = a.pool_padding[1], dh = a.pool_dilation[0], dw = a.pool_dilation[1];
      const T* x = c.in[0]->data<T>();
      int64_t* y = c.out->data<int64_t>();
      const int64_t H = p.in_h, W = p.in_w;
      for_planes(p, p.out_h * p.out_w * kh * kw, [&](int64_t n, int64_t ch) {
        const T* xp = x + n * p.is[0] + ch * p.is[1];
        int64_t* yp = y + n * p.os[0] + ch * p.os[1];
        for (int64_t oh = 0; oh < p.out_h; ++oh) {
          int64_t h0 = oh * sh - ph;
          const int64_t h1 = std::min(h0 + (kh - 1) * dh + 1, H);
          while (h0 < 0) h0 += dh;
          for (int64_t ow = 0; ow < p.out_w; ++ow) {
            int64_t w0 = ow * sw - pw;
            const int64_t w1 = std::min(w0 + (kw - 1) * dw + 1, W);
            while (w0 < 0) w0 += dw;
            int64_t best = h0 * W + w0;
            A m;
            if constexpr (std::is_floating_point_v<A>) m = -std::numeric_limits<A>::infinity();
            else m = std::numeric_limits<A>::lowest();
            for (int64_t h = h0; h < h1; h += dh) {
              for (int64_t w = w0; w < w1; w += dw) {
                const A v = A(xp[h * p.is[2] + w * p.is[3]]);
                bool take = v > m;
                if constexpr (std::is_floating_point_v<A>) take = take || std::isnan(v);
                if (take) m = v, best = h * W + w;
              }
            }
            yp[oh * p.os[2] + ow * p.os[3]] = best;
          }
        }
      });
    }
  }
};

template <typename T>
constexpr bool kFloatT = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, half_t> ||
                         std::is_same_v<T, bfloat16_t>;

// Per input row and column: the range of windows covering it.
struct Cover {
  std::vector<int64_t> hlo, hhi, wlo, whi;
  Cover(int64_t H, int64_t W, int64_t OH, int64_t OW, const OpArgs& a, int64_t span_h, int64_t span_w)
      : hlo(size_t(H)), hhi(size_t(H)), wlo(size_t(W)), whi(size_t(W)) {
    for (int64_t h = 0; h < H; ++h) covering(h, OH, a.pool_stride[0], a.pool_padding[0], span_h, &hlo[h], &hhi[h]);
    for (int64_t w = 0; w < W; ++w) covering(w, OW, a.pool_stride[1], a.pool_padding[1], span_w, &wlo[w], &whi[w]);
  }
};

template <typename T>
struct MaxBackwardKernel {
  static void run(const KernelCall& c) {
    if constexpr (!kFloatT<T>) {
      throw UnsupportedError("[max_pool2d_backward] needs a floating grad_output");  // excluded by the row mask
    } else {
      using A = acc_t<T>;
      const Planes p(c);  // in: grad (N, C, OH, OW); out: (N, C, H, W)
      const Tensor& idx = *c.in[1];
      const OpArgs& a = *c.args;
      const int64_t OH = p.in_h, OW = p.in_w, H = p.out_h, W = p.out_w;
      const Cover cv(H, W, OH, OW, a, (a.pool_kernel[0] - 1) * a.pool_dilation[0],
                     (a.pool_kernel[1] - 1) * a.pool_dilation[1]);
      const T* g = c.in[0]->data<T>();
      const int64_t* ix = idx.data<int64_t>();
      const int64_t* xs = idx.strides.data();
      T* y = c.out->data<T>();
      for_planes(p, H * W * 4, [&](int64_t n, int64_t ch) {
        const T* gp = g + n * p.is[0] + ch * p.is[1];
        const int64_t* ip = ix + n * xs[0] + ch * xs[1];
        T* yp = y + n * p.os[0] + ch * p.os[1];
        for (int64_t h = 0; h < H; ++h) {
          for (int64_t w = 0; w < W; ++w) {
            const int64_t self = h * W + w;
            A s = A(0);
            for (int64_t oh = cv.hlo[h]; oh < cv.hhi[h]; ++oh)
              for (int64_t ow = cv.wlo[w]; ow < cv.whi[w]; ++ow)
                if (ip[oh * xs[2] + ow * xs[3]] == self) s += A(gp[oh * p.is[2] + ow * p.is[3]]);
            yp[h * p.os[2] + w * p.os[3]] = convert<T>(s);
          }
        }
      });
    }
  }
};

template <typename T>
struct AvgBackwardKernel {
  static void run(const KernelCall& c) {
    if constexpr (!kFloatT<T>) {
      throw UnsupportedError("[avg_pool2d_backward] needs a floating grad_output");  // excluded by the row mask
    } else {
      using A = acc_t<T>;
      const Planes p(c);
      const OpArgs& a = *c.args;
      const int64_t OH = p.in_h, OW = p.in_w, H = p.out_h, W = p.out_w;
      const Cover cv(H, W, OH, OW, a, a.pool_kernel[0] - 1, a.pool_kernel[1] - 1);
      // Each window's divisor factor per dim, as the forward: the window clipped to the padded
      // input (count_include_pad) or to the input.
      auto factors = [&](int d, int64_t out, int64_t in) {
        std::vector<int64_t> f(static_cast<size_t>(out));
        for (int64_t o = 0; o < out; ++o) {
          const int64_t start = o * a.pool_stride[d] - a.pool_padding[d];
          const int64_t end = std::min(start + a.pool_kernel[d], in + a.pool_padding[d]);
          f[o] = a.pool_count_include_pad ? end - start
                                          : std::max<int64_t>(0, std::min(end, in) - std::max<int64_t>(start, 0));
        }
        return f;
      };
      const std::vector<int64_t> fh = factors(0, OH, H), fw = factors(1, OW, W);
      const T* g = c.in[0]->data<T>();
      T* y = c.out->data<T>();
      for_planes(p, H * W * 4, [&](int64_t n, int64_t ch) {
        const T* gp = g + n * p.is[0] + ch * p.is[1];
        T* yp = y + n * p.os[0] + ch * p.os[1];
        for (int64_t h = 0; h < H; ++h) {
          for (int64_t w = 0; w < W; ++w) {
            A s = A(0);
            for (int64_t oh = cv.hlo[h]; oh < cv.hhi[h]; ++oh)
              for (int64_t ow = cv.wlo[w]; ow < cv.whi[w]; ++ow) {
                const int64_t div = a.pool_divisor ? a.pool_divisor : fh[oh] * fw[ow];
                s += A(gp[oh * p.is[2] + ow * p.is[3]]) / A(div);
              }
            yp[h * p.os[2] + w * p.os[3]] = convert<T>(s);
          }
        }
      });
    }
  }
};

// Windows o of an adaptive pooling of `in` into `out` covering i: [floor(i * out / in),
// ceil((i + 1) * out / in)), the inverse of [floor(o * in / out), ceil((o + 1) * in / out)).
void adaptive_cover(int64_t i, int64_t in, int64_t out, int64_t* lo, int64_t* hi) {
  *lo = i * out / in;
  *hi = std::min(out, ((i + 1) * out + in - 1) / in);
}

template <typename T>
struct AdaptiveAvgBackwardKernel {
  static void run(const KernelCall& c) {
    if constexpr (!kFloatT<T>) {
      throw UnsupportedError("[adaptive_avg_pool2d_backward] needs a floating grad_output");  // row mask
    } else {
      using A = acc_t<T>;
      const Planes p(c);
      const int64_t OH = p.in_h, OW = p.in_w, H = p.out_h, W = p.out_w;
      const size_t h = static_cast<size_t>(H), w = static_cast<size_t>(W);
      std::vector<int64_t> hlo(h), hhi(h), wlo(w), whi(w), fh(static_cast<size_t>(OH)), fw(static_cast<size_t>(OW));
      for (int64_t h = 0; h < H; ++h) adaptive_cover(h, H, OH, &hlo[h], &hhi[h]);
      for (int64_t w = 0; w < W; ++w) adaptive_cover(w, W, OW, &wlo[w], &whi[w]);
      for (int64_t o = 0; o < OH; ++o) fh[o] = (o + 1) * H / OH + ((o + 1) * H % OH != 0) - o * H / OH;
      for (int64_t o = 0; o < OW; ++o) fw[o] = (o + 1) * W / OW + ((o + 1) * W % OW != 0) - o * W / OW;
      const T* g = c.in[0]->data<T>();
      T* y = c.out->data<T>();
      for_planes(p, H * W * 4, [&](int64_t n, int64_t ch) {
        const T* gp = g + n * p.is[0] + ch * p.is[1];
        T* yp = y + n * p.os[0] + ch * p.os[1];
        for (int64_t h = 0; h < H; ++h) {
          for (int64_t w = 0; w < W; ++w) {
            A s = A(0);
            for (int64_t oh = hlo[h]; oh < hhi[h]; ++oh)
              for (int64_t ow = wlo[w]; ow < whi[w]; ++ow)
                s += A(gp[oh * p.is[2] + ow * p.is[3]]) / A(fh[oh] * fw[ow]);
            yp[h * p.os[2] + w * p.os[3]] = convert<T>(s);
          }
        }
      });
    }
  }
};

}  // namespace

void register_pool_backward_kernels(Backend& b) {
  register_for_row<MaxIndexKernel>(b, OpId::max_pool2d_with_indices);
  register_for_row<MaxBackwardKernel>(b, OpId::max_pool2d_backward);
  register_for_row<AvgBackwardKernel>(b, OpId::avg_pool2d_backward);
  register_for_row<AdaptiveAvgBackwardKernel>(b, OpId::adaptive_avg_pool2d_backward);
}

}  // namespace bm::cpu
