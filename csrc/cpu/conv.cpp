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
#include "cpu/convert.h"
#include "cpu/kernels.h"

namespace bm::cpu {

namespace {

constexpr int64_t kColElems = int64_t(4) << 20;  // column matrix budget (16 MiB of float)
constexpr int64_t kMinCols = 1024;               // images smaller than this are batched into one product
constexpr int64_t kGrain = 16384;                // elements per parallel chunk

struct Geom {
  int64_t N, C, H, W, O, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, G, Cg, Og, K, P;
  int64_t xs[4];  // input strides (elements)
};

Geom geometry(const KernelCall& c, const Tensor& x) {
  const Tensor &w = *c.in[1], &out = *c.out;
  const OpArgs& a = *c.args;
  Geom g{};
  g.N = x.shape[0], g.C = x.shape[1], g.H = x.shape[2], g.W = x.shape[3];
  g.O = w.shape[0], g.KH = w.shape[2], g.KW = w.shape[3];
  g.OH = out.shape[2], g.OW = out.shape[3];
  g.sh = a.conv_stride[0], g.sw = a.conv_stride[1];
  g.ph = a.conv_padding[0], g.pw = a.conv_padding[1];
  g.dh = a.conv_dilation[0], g.dw = a.conv_dilation[1];
  g.G = a.conv_groups, g.Cg = g.C / g.G, g.Og = g.O / g.G;
  g.K = g.Cg * g.KH * g.KW, g.P = g.OH * g.OW;
  for (int d = 0; d < 4; ++d) g.xs[d] = x.strides[d];
  return g;
}

// Output positions o in [0, out_len) whose input position o * stride - pad + off lies in
// [0, in_len): the range [*lo, *hi) (empty when *hi <= *lo).
void valid_range(int64_t out_len, int64_t in_len, int64_t stride, int64_t pad, int64_t off, int64_t* lo, int64_t* hi) {
  int64_t a = pad - off, b = in_len - 1 + pad - off;
  *lo = a <= 0 ? 0 : (a + stride - 1) / stride;
  *hi = b < 0 ? 0 : std::min(out_len, b / stride + 1);
  if (*hi < *lo) *hi = *lo;
}

// Scratch memory from the host allocator's cache (no page faults per call, no zeroing).
template <typename A>
struct Scratch {
  A* p = nullptr;
  size_t bytes = 0;
  explicit Scratch(int64_t n) : bytes(size_t(std::max<int64_t>(n, 1)) * sizeof(A)) {
    p = static_cast<A*>(host_alloc(bytes));
  }
  ~Scratch() { host_free(p, bytes); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

// A block of output columns of one group: images [n0, n1) and pixels [p0, p1) of each.
struct Block {
  int64_t n0, n1, p0, p1;
  int64_t cols() const { return (n1 - n0) * (p1 - p0); }
};

// Rows [r0, r1) of the column matrix of `blk` (row r = (c, ky, kx), ld = blk.cols()) from the
// input channels of group `grp` (the input already in the compute type).
template <typename A>
void im2col_rows(const A* x, const Geom& g, int64_t grp, const Block& blk, int64_t r0, int64_t r1, A* col) {
  const int64_t ld = blk.cols(), per = blk.p1 - blk.p0;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t c = r / (g.KH * g.KW), ky = r / g.KW % g.KH, kx = r % g.KW;
    int64_t lo, hi;
    valid_range(g.OW, g.W, g.sw, g.pw, kx * g.dw, &lo, &hi);
    const int64_t xoff = kx * g.dw - g.pw;  // input column of output column ox: ox * sw + xoff
    for (int64_t n = blk.n0; n < blk.n1; ++n) {
      const A* plane = x + n * g.xs[0] + (grp * g.Cg + c) * g.xs[1];
      A* row = col + r * ld + (n - blk.n0) * per;  // row[p - p0] for p in [p0, p1)
      for (int64_t p = blk.p0; p < blk.p1;) {
        const int64_t oy = p / g.OW, ox0 = p % g.OW, ox1 = std::min(g.OW, ox0 + (blk.p1 - p));
        A* d = row + (p - blk.p0);  // d[ox - ox0] for this output row's columns [ox0, ox1)
        const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
        const int64_t a = std::max(ox0, lo), b = std::min(ox1, hi);
        if (iy < 0 || iy >= g.H || a >= b) {
          std::fill(d, d + (ox1 - ox0), A(0));
        } else {
          std::fill(d, d + (a - ox0), A(0));
          const A* src = plane + iy * g.xs[2];
          A* da = d + (a - ox0);
          if (g.sw == 1 && g.xs[3] == 1) {
            std::memcpy(da, src + a + xoff, size_t(b - a) * sizeof(A));
          } else {
            for (int64_t ox = a; ox < b; ++ox) da[ox - a] = src[(ox * g.sw + xoff) * g.xs[3]];
          }
          std::fill(d + (b - ox0), d + (ox1 - ox0), A(0));
        }
        p += ox1 - ox0;
      }
    }
  }
}

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
  // The input in the compute type with unit stride along W (unfolding copies runs of W): float32
  // and float64 inputs are used in place unless their W stride is not 1 (a channels-last or
  // step-sliced view), then copied once, explicitly; half types are converted once, contiguous
  // (not once per kernel tap during the unfolding).
  const Tensor* xt = call.in[0];
  TensorPtr x_keep;
  std::unique_ptr<Scratch<A>> x_conv;
  Geom g;
  const A* x;
  if constexpr (std::is_same_v<T, A>) {
    if (xt->shape[3] > 1 && xt->strides[3] != 1) {
      x_keep = contiguous(std::make_shared<Tensor>(*xt));
      xt = x_keep.get();
    }
    g = geometry(call, *xt);
    x = xt->data<A>();
  } else {
    g = geometry(call, *xt);
    x_conv = std::make_unique<Scratch<A>>(g.N * g.C * g.H * g.W);
    A* dst = x_conv->p;
    const T* src = xt->data<T>();
    const int64_t* st = xt->strides.data();
    parallel_for(0, g.N * g.C * g.H, std::max<int64_t>(1, kGrain / g.W), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = r / (g.C * g.H), c = r / g.H % g.C, y = r % g.H;
        const T* s = src + n * st[0] + c * st[1] + y * st[2];
        A* d = dst + r * g.W;
        for (int64_t i = 0; i < g.W; ++i) d[i] = convert<A>(s[i * st[3]]);
      }
    });
    g.xs[0] = g.C * g.H * g.W, g.xs[1] = g.H * g.W, g.xs[2] = g.W, g.xs[3] = 1;
    x = dst;
  }

  // Weights as an O x K row-major matrix in the compute type (staged unless already that), bias in A.
  const Tensor& w = *call.in[1];
  std::unique_ptr<Scratch<A>> w_stage;
  const A* wm = nullptr;
  if constexpr (std::is_same_v<T, A>) {
    if (w.is_contiguous()) wm = w.data<A>();
  }
  if (!wm) {
    w_stage = std::make_unique<Scratch<A>>(g.O * g.K);
    A* dst = w_stage->p;
    for (int64_t o = 0; o < g.O; ++o)
      for (int64_t c = 0; c < g.Cg; ++c)
        for (int64_t i = 0; i < g.KH; ++i)
          for (int64_t j = 0; j < g.KW; ++j)
            *dst++ = convert<A>(w.data<T>()[o * w.strides[0] + c * w.strides[1] + i * w.strides[2] + j * w.strides[3]]);
    wm = w_stage->p;
  }
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
  if (g.Og > kBlasIntMax || g.K > kBlasIntMax || g.P > kBlasIntMax)
    throw ValueError("[conv2d] the convolution is too large for the BLAS library's 32-bit sizes");

  // Column blocks: tiles of one image, or whole images batched up to kMinCols columns.
  const int64_t max_cols = std::max<int64_t>(256, kColElems / g.K);
  const int64_t per_block = g.P >= kMinCols ? 1 : std::max<int64_t>(1, std::min(kMinCols, max_cols) / g.P);
  const int64_t tile = per_block > 1 ? g.P : std::min(g.P, max_cols);
  std::vector<Block> blocks;
  for (int64_t n0 = 0; n0 < g.N; n0 += per_block)
    for (int64_t p0 = 0; p0 < g.P; p0 += tile)
      blocks.push_back({n0, std::min(g.N, n0 + per_block), p0, std::min(g.P, p0 + tile)});
  int64_t cols_max = 0;
  for (const Block& b : blocks) cols_max = std::max(cols_max, b.cols());

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
