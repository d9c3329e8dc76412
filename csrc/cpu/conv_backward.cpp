// The gradients of conv2d on the CPU: conv2d_backward_input (grad_output, weight) -> grad of the
// input, conv2d_backward_weight (grad_output, input) -> grad of the weight. The op layer
// (core/ops_nn_conv.cpp) has checked the arguments and hands over 4-D operands, the output of the
// final shape and no empty operand. Any strides.
//
// Per group, with K = Cg * kH * kW and the columns (n, oy, ox) of the output pixels:
//   input:  columns (K x cols) = weight^T (K x Og) @ grad (Og x cols), then col2im adds each
//           column entry into the input pixel it was unfolded from (per (image, channel) plane,
//           the planes in parallel, the taps in a fixed order);
//   weight: grad_w (Og x K) += grad (Og x cols) @ columns^T (cols x K), the columns unfolded from
//           the input as the forward does (im2col), one column block after another.
// float32 with one group (and more than two output channels) runs both products on our panel
// kernel (conv_gemm_backward.cpp; the input gradient of 3x3 stride-1 convolutions on Winograd);
// float64, the half types and grouped convolutions send them to BLAS. grad_output is staged once
// as O rows of N * OH * OW columns in the compute type (float for float32 and the half types,
// double for float64), so a block of several images is one matrix. With one or two output channels per group (depthwise) BLAS is skipped:
// each input-gradient plane, or each (output channel, input channel) pair of the weight gradient,
// is accumulated directly, in parallel. Sums are taken in A and rounded to T once.
#include <algorithm>
#include <memory>
#include <type_traits>

#include "core/errors.h"
#include "core/ops.h"
#include "core/parallel.h"
#include "cpu/blas.h"
#include "cpu/conv_common.h"
#include "cpu/conv_gemm.h"
#include "cpu/conv_winograd.h"
#include "cpu/convert.h"
#include "cpu/kernels.h"

namespace bm::cpu {

namespace {

using namespace conv_impl;

// grad_output (N, O, OH, OW) as O rows of N * P columns (column n * P + p), in A; read in place
// when it already is that (one image, contiguous, in the compute type).
template <typename T, typename A>
struct StagedGrad {
  std::unique_ptr<Scratch<A>> buf;
  const A* p = nullptr;

  StagedGrad(const Tensor& go, const Geom& g) {
    if constexpr (std::is_same_v<T, A>) {
      if (g.N == 1 && go.is_contiguous()) {
        p = go.data<A>();
        return;
      }
    }
    buf = std::make_unique<Scratch<A>>(g.O * g.N * g.P);
    A* dst = buf->p;
    const T* src = go.data<T>();
    const int64_t* st = go.strides.data();
    parallel_for(0, g.O * g.N * g.OH, std::max<int64_t>(1, kGrain / g.OW), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {  // r = (o, n, oy)
        const int64_t o = r / (g.N * g.OH), n = r / g.OH % g.N, oy = r % g.OH;
        const T* s = src + n * st[0] + o * st[1] + oy * st[2];
        A* d = dst + r * g.OW;
        for (int64_t ox = 0; ox < g.OW; ++ox) d[ox] = convert<A>(s[ox * st[3]]);
      }
    });
    p = dst;
  }
};

// An accumulator for the result in A, contiguous: the output itself when it is contiguous in the
// compute type, else scratch that store() rounds into the output's dtype and strides. Zeroed,
// unless the kernel writes every element itself (`overwritten`: ResNet's layer4.0 weight gradient,
// 4.7 MB, was otherwise written twice, zeros first).
template <typename T, typename A>
struct Accumulator {
  Tensor& out;
  std::unique_ptr<Scratch<A>> buf;
  A* p;

  explicit Accumulator(Tensor& o, bool overwritten = false) : out(o) {
    const int64_t n = o.numel();
    if (std::is_same_v<T, A> && o.is_contiguous()) {
      p = reinterpret_cast<A*>(o.data<T>());
    } else {
      buf = std::make_unique<Scratch<A>>(n);
      p = buf->p;
    }
    if (!overwritten) parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) { std::fill(p + b, p + e, A(0)); });
  }
  void store() {
    if (!buf) return;
    const Shape& s = out.shape;
    const int64_t* st = out.strides.data();
    T* dst = out.data<T>();
    parallel_for(0, s[0] * s[1] * s[2], std::max<int64_t>(1, kGrain / s[3]), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t a = r / (s[1] * s[2]), b = r / s[2] % s[1], c = r % s[2];
        const A* src = p + r * s[3];
        T* d = dst + a * st[0] + b * st[1] + c * st[2];
        for (int64_t i = 0; i < s[3]; ++i) d[i * st[3]] = convert<T>(src[i]);
      }
    });
  }
};

// Adds the columns of image n, channel c (of the block's group) into that input plane (H x W,
// contiguous): the adjoint of im2col_rows.
template <typename A>
void col2im_plane(const A* col, const Geom& g, const Block& blk, int64_t n, int64_t c, A* plane) {
  const int64_t ld = blk.cols(), per = blk.p1 - blk.p0;
  for (int64_t ky = 0; ky < g.KH; ++ky) {
    for (int64_t kx = 0; kx < g.KW; ++kx) {
      const A* row = col + ((c * g.KH + ky) * g.KW + kx) * ld + (n - blk.n0) * per;
      int64_t lo, hi;
      valid_range(g.OW, g.W, g.sw, g.pw, kx * g.dw, &lo, &hi);
      const int64_t xoff = kx * g.dw - g.pw;
      for (int64_t p = blk.p0; p < blk.p1;) {
        const int64_t oy = p / g.OW, ox0 = p % g.OW, ox1 = std::min(g.OW, ox0 + (blk.p1 - p));
        const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
        const int64_t a = std::max(ox0, lo), b = std::min(ox1, hi);
        if (iy >= 0 && iy < g.H && a < b) {
          const A* s = row + (p - blk.p0) + (a - ox0);  // s[ox - a]
          A* d = plane + iy * g.W + a * g.sw + xoff;      // d[(ox - a) * sw]
          if (g.sw == 1) {
            for (int64_t i = 0; i < b - a; ++i) d[i] += s[i];
          } else {
            for (int64_t i = 0; i < b - a; ++i) d[i * g.sw] += s[i];
          }
        }
        p += ox1 - ox0;
      }
    }
  }
}

void check_blas_sizes(const char* op, const Geom& g) {
  if (g.Og > kBlasIntMax || g.K > kBlasIntMax || g.N * g.P > kBlasIntMax)
    throw ValueError(std::string("[") + op + "] the convolution is too large for the BLAS library's 32-bit sizes");
}

// The input gradient of a 3x3, stride-1 convolution is itself one: grad_output convolved with
// the filters turned by 180 degrees and with input and output channels swapped, padded by 2 - p,
// run through Winograd (conv_winograd.cpp; the filter cache keeps the turned filters in the
// transform domain) on grad_output staged as StagedGrad lays it out.
// The geometry of that convolution in *g; false when Winograd does not take it.
bool input_grad_as_winograd(const Geom& f, Geom* g) {
  if (f.KH != 3 || f.KW != 3 || f.sh != 1 || f.sw != 1 || f.dh != 1 || f.dw != 1 || f.G != 1 || f.ph > 2 ||
      f.pw > 2 || f.Og <= 2)
    return false;
  *g = f;
  g->C = f.O, g->H = f.OH, g->W = f.OW, g->O = f.C, g->OH = f.H, g->OW = f.W;
  g->ph = 2 - f.ph, g->pw = 2 - f.pw, g->Cg = g->C, g->Og = g->O, g->K = g->C * 9, g->P = g->OH * g->OW;
  g->xs[0] = f.P, g->xs[1] = f.N * f.P, g->xs[2] = f.OW, g->xs[3] = 1;  // StagedGrad: (o, n, oy, ox)
  return winograd_applies(*g);
}

template <typename T>
void backward_input(const KernelCall& call) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const Tensor &go = *call.in[0], &w = *call.in[1];
  Tensor& out = *call.out;
  const Geom g = geometry(out.shape, contiguous_strides(out.shape), w.shape, go.shape[2], go.shape[3], *call.args);
  const StagedWeight<T, A> wst(w);
  const A* wm = wst.p;
  if constexpr (std::is_same_v<T, float>) {
    FilterOrigin origin;  // the filters read in place from the weight's storage: see conv.cpp
    if (!wst.buf) origin = {w.storage.get(), size_t(w.offset) * sizeof(float)};
    Geom wg;
    if (input_grad_as_winograd(g, &wg)) {
      const StagedGrad<T, A> gst(go, g);
      conv2d_winograd(gst.p, wg, wm, nullptr, out.data<float>(), out.strides.data(), origin, /*turned=*/true);
      return;
    }
    if (direct_input_grad_applies(g)) {  // conv_direct_backward.cpp
      conv2d_backward_input_direct(wm, g, go.data<float>(), go.strides.data(), out.data<float>(),
                                   out.strides.data(), origin);
      return;
    }
  }
  const StagedGrad<T, A> gst(go, g);
  const A* gs = gst.p;
  const int64_t NP = g.N * g.P, HW = g.H * g.W;
  Accumulator<T, A> acc(out);

  if (g.Og <= 2) {
    // One input plane per task: the taps of its group's output channels scattered directly.
    parallel_for(0, g.N * g.C, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, g.Og * g.KH * g.KW * g.P)),
                 [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t n = q / g.C, c = q % g.C, grp = c / g.Cg, ci = c % g.Cg;
        A* plane = acc.p + q * HW;
        for (int64_t oc = grp * g.Og; oc < (grp + 1) * g.Og; ++oc) {
          const A* gp = gs + oc * NP + n * g.P;
          for (int64_t ky = 0; ky < g.KH; ++ky) {
            for (int64_t kx = 0; kx < g.KW; ++kx) {
              const A wv = wm[oc * g.K + (ci * g.KH + ky) * g.KW + kx];
              int64_t lo, hi;
              valid_range(g.OW, g.W, g.sw, g.pw, kx * g.dw, &lo, &hi);
              const int64_t xoff = kx * g.dw - g.pw;
              for (int64_t oy = 0; oy < g.OH; ++oy) {
                const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
                if (iy < 0 || iy >= g.H) continue;
                const A* s = gp + oy * g.OW;
                A* d = plane + iy * g.W;
                for (int64_t ox = lo; ox < hi; ++ox) d[ox * g.sw + xoff] += wv * s[ox];
              }
            }
          }
        }
      }
    });
    acc.store();
    return;
  }
  int64_t cols_max;
  const std::vector<Block> blocks = column_blocks(g, &cols_max);
  // Adds the block's columns into the input planes of group grp, one (image, channel) plane per task.
  auto scatter = [&](int64_t grp, const Block& blk, const A* col) {
    const int64_t nimg = blk.n1 - blk.n0, ncols = blk.cols();
    parallel_for(0, nimg * g.Cg, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, g.KH * g.KW * ncols / nimg)),
                 [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t n = blk.n0 + q / g.Cg, c = q % g.Cg;
        col2im_plane<A>(col, g, blk, n, c, acc.p + (n * g.C + grp * g.Cg + c) * HW);
      }
    });
  };
  if constexpr (std::is_same_v<T, float>) {
    if (panel_gemm_applies(g)) {  // our panel kernel for the columns (conv_gemm_backward.cpp)
      conv2d_backward_input_panel(wm, g, gs, blocks, cols_max,
                                  [&](const Block& blk, const float* col) { scatter(0, blk, col); });
      acc.store();
      return;
    }
  }
  check_blas_sizes("conv2d_backward_input", g);
  Scratch<A> col(g.K * cols_max);
  for (int64_t grp = 0; grp < g.G; ++grp) {
    for (const Block& blk : blocks) {
      const int64_t ncols = blk.cols();
      gemm(true, false, blas_int(g.K), blas_int(ncols), blas_int(g.Og), wm + grp * g.Og * g.K, blas_int(g.K),
           gs + grp * g.Og * NP + blk.n0 * g.P + blk.p0, blas_int(NP), col.p, blas_int(ncols));
      scatter(grp, blk, col.p);
    }
  }
  acc.store();
}

template <typename T>
void backward_weight(const KernelCall& call) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const Tensor &go = *call.in[0], &xt = *call.in[1];
  Tensor& out = *call.out;
  const StagedInput<T, A> xin(xt);
  const A* x = xin.p;
  const Geom g = geometry(xt.shape, xin.strides, out.shape, go.shape[2], go.shape[3], *call.args);
  if constexpr (std::is_same_v<T, float>) {
    // These three kernels write every element of the gradient: no zeros first.
    if (winograd_weight_grad_applies(g)) {  // 3x3 stride 1 or 2 (conv_winograd_backward.cpp)
      Accumulator<T, A> acc(out, /*overwritten=*/true);
      conv2d_backward_weight_winograd(x, g, go.data<float>(), go.strides.data(), acc.p);
      acc.store();
      return;
    }
    if (direct_weight_grad_applies(g)) {  // the direct kernel (conv_direct_backward.cpp)
      Accumulator<T, A> acc(out, /*overwritten=*/true);
      conv2d_backward_weight_direct(x, g, go.data<float>(), go.strides.data(), acc.p);
      acc.store();
      return;
    }
    if (panel_gemm_applies(g)) {  // our panel kernel, grad_output read in place (conv_gemm_backward.cpp)
      Accumulator<T, A> acc(out, /*overwritten=*/true);
      conv2d_backward_weight_panel(x, g, go.data<float>(), go.strides.data(), acc.p);
      acc.store();
      return;
    }
  }
  const StagedGrad<T, A> gst(go, g);
  const A* gs = gst.p;
  const int64_t NP = g.N * g.P;
  Accumulator<T, A> acc(out);

  if (g.Og <= 2) {
    // One (output channel, input channel) pair per task: its kH * kW sums over images and pixels.
    parallel_for(0, g.O * g.Cg, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, g.KH * g.KW * NP)),
                 [&](int64_t q0, int64_t q1) {
      Scratch<A> colsum(g.OW);
      const bool unit = g.sw == 1 && g.xs[3] == 1;
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t oc = q / g.Cg, ci = q % g.Cg, c = oc / g.Og * g.Cg + ci;
        for (int64_t ky = 0; ky < g.KH; ++ky) {
          for (int64_t kx = 0; kx < g.KW; ++kx) {
            int64_t lo, hi;
            valid_range(g.OW, g.W, g.sw, g.pw, kx * g.dw, &lo, &hi);
            const int64_t xoff = kx * g.dw - g.pw;
            // Products summed per output column first (a vectorisable row update; unit strides
            // are the common case), then the columns, in a fixed order.
            std::fill(colsum.p, colsum.p + g.OW, A(0));
            for (int64_t n = 0; n < g.N; ++n) {
              const A* plane = x + n * g.xs[0] + c * g.xs[1];
              const A* gp = gs + oc * NP + n * g.P;
              for (int64_t oy = 0; oy < g.OH; ++oy) {
                const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
                if (iy < 0 || iy >= g.H) continue;
                const A* xr = plane + iy * g.xs[2];
                const A* gr = gp + oy * g.OW;
                if (unit) {
                  if (hi <= lo) continue;
                  const A* xa = xr + lo + xoff;  // input columns lo + xoff .. hi + xoff: inside the row
                  const A* ga = gr + lo;
                  A* cs = colsum.p + lo;
                  for (int64_t i = 0; i < hi - lo; ++i) cs[i] += ga[i] * xa[i];
                } else {
                  for (int64_t ox = lo; ox < hi; ++ox) colsum.p[ox] += gr[ox] * xr[(ox * g.sw + xoff) * g.xs[3]];
                }
              }
            }
            A s = A(0);
            for (int64_t ox = lo; ox < hi; ++ox) s += colsum.p[ox];
            acc.p[oc * g.K + (ci * g.KH + ky) * g.KW + kx] = s;
          }
        }
      }
    });
    acc.store();
    return;
  }
  check_blas_sizes("conv2d_backward_weight", g);
  int64_t cols_max;
  const std::vector<Block> blocks = column_blocks(g, &cols_max);
  Scratch<A> col(g.K * cols_max);
  for (int64_t grp = 0; grp < g.G; ++grp) {
    for (const Block& blk : blocks) {
      const int64_t ncols = blk.cols();
      parallel_for(0, g.K, std::max<int64_t>(1, kGrain / ncols),
                   [&](int64_t r0, int64_t r1) { im2col_rows<A>(x, g, grp, blk, r0, r1, col.p); });
      gemm(false, true, blas_int(g.Og), blas_int(g.K), blas_int(ncols), gs + grp * g.Og * NP + blk.n0 * g.P + blk.p0,
           blas_int(NP), col.p, blas_int(ncols), acc.p + grp * g.Og * g.K, blas_int(g.K), A(1));
    }
  }
  acc.store();
}

template <typename T>
constexpr bool kConvFloat = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, half_t> ||
                            std::is_same_v<T, bfloat16_t>;

template <typename T>
struct BackwardInputKernel {
  static void run(const KernelCall& call) {
    if constexpr (kConvFloat<T>) backward_input<T>(call);
    else throw UnsupportedError("[conv2d_backward_input] integer and bool inputs have no kernel");  // row mask
  }
};
template <typename T>
struct BackwardWeightKernel {
  static void run(const KernelCall& call) {
    if constexpr (kConvFloat<T>) backward_weight<T>(call);
    else throw UnsupportedError("[conv2d_backward_weight] integer and bool inputs have no kernel");  // row mask
  }
};

}  // namespace

void register_conv_backward_kernels(Backend& b) {
  register_for_row<BackwardInputKernel>(b, OpId::conv2d_backward_input);
  register_for_row<BackwardWeightKernel>(b, OpId::conv2d_backward_weight);
}

}  // namespace bm::cpu
