// conv2d on the CPU. The op layer (core/ops_nn_conv.cpp) has checked every argument and hands over
// a 4-D input, a 4-D weight, an optional bias, a fresh output and no empty operand.
//
// Per group, output channels x output pixels is one product: weight (Og x K) @ columns (K x
// pixels), K = Cg * kH * kW. The columns are the unfolded input patches (im2col), built in the
// compute type (float for float32 and the half types, which are converted once up front; double for
// float64) by our threads, and the product goes to BLAS, which threads it itself: OpenBLAS runs one
// call at a time anyway (concurrent calls serialise), so splitting a product between our threads
// would not help. A block of columns is a tile of one image when images are large, or several whole
// images when they are small (so the weights are packed once for many pixels). A 1x1 stride-1
// convolution reads the input directly as the column matrix. Convolutions with one or two output
// channels per group (depthwise) skip BLAS and accumulate each output plane directly. When BLAS
// writes the output in place, the bias is stored first (in the same parallel pass as the unfolding)
// and BLAS adds the product to it (beta = 1).
#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

#include "core/errors.h"
#include "core/ops.h"
#include "core/parallel.h"
#include "cpu/allocator.h"
#include "cpu/blas.h"
#include "cpu/conv_common.h"
#include "cpu/conv_gemm.h"
#include "cpu/conv_winograd.h"
#include "cpu/convert.h"
#include "cpu/kernels.h"

namespace bm::cpu {

namespace {

using namespace conv_impl;

// out[n, grp * Og + o, p] = res[o - o0][j] + bias[o] for o in [o0, o1) over the block (j numbers
// its columns), rounded to T, with the output's strides.
template <typename T, typename A>
void store_rows(const Tensor& out, const Geom& g, int64_t grp, const Block& blk, const A* res, const A* bias,
                int64_t o0, int64_t o1) {
  const int64_t ld = blk.cols(), per = blk.p1 - blk.p0;
  const int64_t* os = out.strides.data();
  const bool flat = os[3] == 1 && (g.OH == 1 || os[2] == g.OW);  // pixel p at p * 1
  for (int64_t o = o0; o < o1; ++o) {
    const int64_t oc = grp * g.Og + o;
    const A bv = bias ? bias[oc] : A(0);
    for (int64_t n = blk.n0; n < blk.n1; ++n) {
      const A* r = res + (o - o0) * ld + (n - blk.n0) * per;
      T* dst = out.data<T>() + n * os[0] + oc * os[1];
      if (flat) {
        for (int64_t p = blk.p0; p < blk.p1; ++p) dst[p] = convert<T>(A(r[p - blk.p0] + bv));
      } else {
        for (int64_t p = blk.p0; p < blk.p1; ++p)
          dst[(p / g.OW) * os[2] + (p % g.OW) * os[3]] = convert<T>(A(r[p - blk.p0] + bv));
      }
    }
  }
}

// Few output channels per group: each output plane accumulated directly, one plane per task.
template <typename T, typename A>
void conv_direct(const A* x, const Geom& g, const A* wm, const A* bias, const Tensor& out) {
  const int64_t planes = g.N * g.O;
  parallel_for(0, planes, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, g.P * g.K)), [&](int64_t q0, int64_t q1) {
    Scratch<A> acc(g.P);
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / g.O, oc = q % g.O, grp = oc / g.Og;
      std::fill(acc.p, acc.p + g.P, A(0));
      for (int64_t r = 0; r < g.K; ++r) {
        const int64_t c = r / (g.KH * g.KW), ky = r / g.KW % g.KH, kx = r % g.KW;
        const A wv = wm[oc * g.K + r];
        int64_t lo, hi;
        valid_range(g.OW, g.W, g.sw, g.pw, kx * g.dw, &lo, &hi);
        const int64_t xoff = kx * g.dw - g.pw;
        const A* plane = x + n * g.xs[0] + (grp * g.Cg + c) * g.xs[1];
        for (int64_t oy = 0; oy < g.OH; ++oy) {
          const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
          if (iy < 0 || iy >= g.H) continue;
          const A* src = plane + iy * g.xs[2];
          A* d = acc.p + oy * g.OW;
          if (g.sw == 1 && g.xs[3] == 1) {
            for (int64_t ox = lo; ox < hi; ++ox) d[ox] += wv * src[ox + xoff];
          } else {
            for (int64_t ox = lo; ox < hi; ++ox) d[ox] += wv * src[(ox * g.sw + xoff) * g.xs[3]];
          }
        }
      }
      const int64_t o = oc - grp * g.Og;
      store_rows<T, A>(out, g, grp, Block{n, n + 1, 0, g.P}, acc.p, bias, o, o + 1);
    }
  });
}

template <typename T>
void conv2d_cpu(const KernelCall& call) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  Tensor& out = *call.out;
  // The input in the compute type with unit stride along W, the weights as an O x K matrix in the
  // compute type (conv_common.h), the bias in A.
  const StagedInput<T, A> xin(*call.in[0]);
  const Geom g = geometry(call.in[0]->shape, xin.strides, call.in[1]->shape, out.shape[2], out.shape[3], *call.args);
  const A* x = xin.p;
  const StagedWeight<T, A> wst(*call.in[1]);
  const A* wm = wst.p;
  std::unique_ptr<Scratch<A>> b_stage;
  const A* bias = nullptr;
  if (call.nin > 2) {
    const Tensor& b = *call.in[2];
    b_stage = std::make_unique<Scratch<A>>(g.O);
    for (int64_t o = 0; o < g.O; ++o) b_stage->p[o] = convert<A>(b.data<T>()[o * b.strides[0]]);
    bias = b_stage->p;
  }

  if (g.Og <= 2) {
    conv_direct<T, A>(x, g, wm, bias, out);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    // The filters read in place from the weight's storage (not a staged copy): the filter cache may
    // find them by (storage, offset, version) (conv_pack_cache.h).
    const Tensor& w = *call.in[1];
    FilterOrigin origin;
    if (!wst.buf) origin = {w.storage.get(), size_t(w.offset) * sizeof(float)};
    if (winograd_applies(g)) {  // 3x3, stride 1 or 2: conv_winograd.cpp
      conv2d_winograd(x, g, wm, bias, out.data<float>(), out.strides.data(), origin);
      return;
    }
    if (direct_applies(g)) {  // conv_gemm.cpp
      conv2d_direct(x, g, wm, bias, out.data<float>(), out.strides.data(), origin);
      return;
    }
    if (panel_gemm_applies(g)) {  // conv_gemm.cpp
      conv2d_panel_gemm(x, g, wm, bias, out.data<float>(), out.strides.data(), origin);
      return;
    }
  }
  if (g.Og > kBlasIntMax || g.K > kBlasIntMax || g.P > kBlasIntMax)
    throw ValueError("[conv2d] the convolution is too large for the BLAS library's 32-bit sizes");

  // Column blocks: tiles of one image, or whole images batched up to kMinCols columns.
  int64_t cols_max;
  const std::vector<Block> blocks = column_blocks(g, &cols_max);
  const int64_t per_block = blocks.empty() ? 1 : blocks[0].n1 - blocks[0].n0;

  // The output takes the product directly when it is contiguous in the compute type.
  const bool direct_out = std::is_same_v<T, A> && out.is_contiguous();
  // 1x1, stride 1, no padding: the input of one image already is the column matrix, read in place
  // when BLAS can address it (not, e.g., with zero channel strides).
  const bool pointwise = g.KH == 1 && g.KW == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 &&
                         (g.H == 1 || g.W == 1 || g.xs[2] == g.W * g.xs[3]);
  auto in_place = [&](int64_t grp, const Block& blk) -> std::optional<BlasOperand<A>> {
    if (!pointwise || blk.n1 - blk.n0 != 1) return std::nullopt;
    const int64_t ps = g.W == 1 ? g.xs[2] : g.xs[3];
    const A* base = x + blk.n0 * g.xs[0] + grp * g.Cg * g.xs[1] + blk.p0 * ps;
    return blas_view(MatRef<const A>{base, g.K, blk.cols(), g.xs[1], ps});
  };
  bool need_col = false;
  for (const Block& b : blocks) need_col = need_col || !in_place(0, b);
  Scratch<A> col(need_col ? g.K * cols_max : 0);
  Scratch<A> res(direct_out && per_block == 1 ? 0 : g.Og * cols_max);

  for (int64_t grp = 0; grp < g.G; ++grp) {
    const A* a = wm + grp * g.Og * g.K;
    for (const Block& blk : blocks) {
      const int64_t ncols = blk.cols();
      const bool single = blk.n1 - blk.n0 == 1;
      std::optional<BlasOperand<A>> bop = in_place(grp, blk);
      // Output rows written by BLAS in place; the bias goes in first and BLAS adds the product.
      A* c_out = direct_out && single
                     ? reinterpret_cast<A*>(out.data<T>()) + blk.n0 * g.O * g.P + grp * g.Og * g.P + blk.p0
                     : nullptr;
      const int64_t unfold_rows = bop ? 0 : g.K, bias_rows = c_out && bias ? g.Og : 0;
      // One parallel region per block: rows [0, unfold_rows) of the column matrix, then the bias rows.
      if (unfold_rows + bias_rows > 0) {
        parallel_for(0, unfold_rows + bias_rows, std::max<int64_t>(1, kGrain / ncols), [&](int64_t r0, int64_t r1) {
          if (r0 < unfold_rows) im2col_rows<A>(x, g, grp, blk, r0, std::min(r1, unfold_rows), col.p);
          for (int64_t r = std::max(r0, unfold_rows); r < r1; ++r) {
            A* row = c_out + (r - unfold_rows) * g.P;
            std::fill(row, row + ncols, bias[grp * g.Og + r - unfold_rows]);
          }
        });
      }
      if (!bop) bop = BlasOperand<A>{col.p, false, blas_int(ncols)};
      if (c_out) {
        gemm(false, bop->trans, blas_int(g.Og), blas_int(ncols), blas_int(g.K), a, blas_int(g.K), bop->data, bop->ld,
             c_out, blas_int(g.P), A(bias_rows > 0 ? 1 : 0));
      } else {
        gemm(false, bop->trans, blas_int(g.Og), blas_int(ncols), blas_int(g.K), a, blas_int(g.K), bop->data, bop->ld,
             res.p, blas_int(ncols));
        parallel_for(0, g.Og, std::max<int64_t>(1, kGrain / ncols), [&](int64_t o0, int64_t o1) {
          store_rows<T, A>(out, g, grp, blk, res.p + o0 * ncols, bias, o0, o1);
        });
      }
    }
  }
}

template <typename T>
struct Conv2dKernel {
  static void run(const KernelCall& call) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, half_t> ||
                  std::is_same_v<T, bfloat16_t>) {
      conv2d_cpu<T>(call);
    } else {
      throw UnsupportedError("[conv2d] integer and bool inputs have no conv2d kernel");  // excluded by the row mask
    }
  }
};

}  // namespace

void register_conv_kernels(Backend& b) { register_for_row<Conv2dKernel>(b, OpId::conv2d); }

}  // namespace bm::cpu
