// Pieces the CPU convolution kernels share (conv.cpp: the forward; conv_backward.cpp: the input
// and weight gradients): the geometry, column blocks, the unfolding of input
// patches (im2col), and the staging of operands in the compute type A (float for float32 and the
// half types, double for float64).
#pragma once
#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/ops.h"
#include "core/parallel.h"
#include "cpu/allocator.h"
#include "cpu/convert.h"

namespace bm::cpu::conv_impl {

constexpr int64_t kColElems = int64_t(4) << 20;  // column matrix budget (16 MiB of float)
constexpr int64_t kMinCols = 1024;               // images smaller than this are batched into one product
constexpr int64_t kGrain = 16384;                // elements per parallel chunk

// x: the input (N, C, H, W); weight (O, Cg, KH, KW); the output (N, O, OH, OW).
struct Geom {
  int64_t N, C, H, W, O, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, G, Cg, Og, K, P;
  int64_t xs[4];  // input strides (elements)
};

inline Geom geometry(const Shape& x, const Shape& xstrides, const Shape& w, int64_t OH, int64_t OW, const OpArgs& a) {
  Geom g{};
  g.N = x[0], g.C = x[1], g.H = x[2], g.W = x[3];
  g.O = w[0], g.KH = w[2], g.KW = w[3];
  g.OH = OH, g.OW = OW;
  g.sh = a.conv_stride[0], g.sw = a.conv_stride[1];
  g.ph = a.conv_padding[0], g.pw = a.conv_padding[1];
  g.dh = a.conv_dilation[0], g.dw = a.conv_dilation[1];
  g.G = a.conv_groups, g.Cg = g.C / g.G, g.Og = g.O / g.G;
  g.K = g.Cg * g.KH * g.KW, g.P = g.OH * g.OW;
  for (int d = 0; d < 4; ++d) g.xs[d] = xstrides[d];
  return g;
}

// Output positions o in [0, out_len) whose input position o * stride - pad + off lies in
// [0, in_len): the range [*lo, *hi) (empty when *hi <= *lo).
inline void valid_range(int64_t out_len, int64_t in_len, int64_t stride, int64_t pad, int64_t off, int64_t* lo,
                        int64_t* hi) {
  int64_t a = pad - off, b = in_len - 1 + pad - off;
  *lo = a <= 0 ? 0 : (a + stride - 1) / stride;
  *hi = b < 0 ? 0 : std::min(out_len, b / stride + 1);
  if (*hi < *lo) *hi = *lo;
}

// A block of output columns of one group: images [n0, n1) and pixels [p0, p1) of each.
struct Block {
  int64_t n0, n1, p0, p1;
  int64_t cols() const { return (n1 - n0) * (p1 - p0); }
};

// Column blocks of at most about kColElems / K columns: tiles of one image, or whole images
// batched up to kMinCols columns (so each product is large enough for BLAS).
inline std::vector<Block> column_blocks(const Geom& g, int64_t* cols_max) {
  const int64_t max_cols = std::max<int64_t>(256, kColElems / std::max<int64_t>(g.K, 1));
  const int64_t per_block = g.P >= kMinCols ? 1 : std::max<int64_t>(1, std::min(kMinCols, max_cols) / g.P);
  const int64_t tile = per_block > 1 ? g.P : std::min(g.P, max_cols);
  std::vector<Block> blocks;
  for (int64_t n0 = 0; n0 < g.N; n0 += per_block)
    for (int64_t p0 = 0; p0 < g.P; p0 += tile)
      blocks.push_back({n0, std::min(g.N, n0 + per_block), p0, std::min(g.P, p0 + tile)});
  *cols_max = 0;
  for (const Block& b : blocks) *cols_max = std::max(*cols_max, b.cols());
  return blocks;
}

// Walks row r = (c, ky, kx) of the column matrix of block `blk` (input channels of group `grp`)
// as runs: emit(col, src, step, len) gives block columns [col, col + len) (column order: image,
// then pixel) the values src[i * step], or zeros where src is null (the padding). The one walk
// behind im2col_rows and the panel kernels' unfolding (conv_gemm.cpp, conv_gemm_backward.cpp).
template <typename A, typename Emit>
void unfold_row_runs(const A* x, const Geom& g, int64_t grp, const Block& blk, int64_t r, Emit&& emit) {
  const int64_t c = r / (g.KH * g.KW), ky = r / g.KW % g.KH, kx = r % g.KW;
  int64_t lo, hi;
  valid_range(g.OW, g.W, g.sw, g.pw, kx * g.dw, &lo, &hi);
  const int64_t xoff = kx * g.dw - g.pw;  // input column of output column ox: ox * sw + xoff
  const int64_t step = g.sw * g.xs[3];
  int64_t col = 0;
  for (int64_t n = blk.n0; n < blk.n1; ++n) {
    const A* plane = x + n * g.xs[0] + (grp * g.Cg + c) * g.xs[1];
    for (int64_t p = blk.p0; p < blk.p1;) {
      const int64_t oy = p / g.OW, ox0 = p % g.OW, ox1 = std::min(g.OW, ox0 + (blk.p1 - p));
      const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
      const int64_t a = std::max(ox0, lo), b = std::min(ox1, hi);
      if (iy < 0 || iy >= g.H || a >= b) {
        emit(col, static_cast<const A*>(nullptr), step, ox1 - ox0);
      } else {
        if (a > ox0) emit(col, static_cast<const A*>(nullptr), step, a - ox0);
        emit(col + (a - ox0), plane + iy * g.xs[2] + (a * g.sw + xoff) * g.xs[3], step, b - a);
        if (ox1 > b) emit(col + (b - ox0), static_cast<const A*>(nullptr), step, ox1 - b);
      }
      col += ox1 - ox0;
      p += ox1 - ox0;
    }
  }
}

// d[0, len) = src[i * step], or zeros where src is null: one run of unfold_row_runs, stored
// contiguously. Stride 2 (stride-2 convolutions) has its own loop: a constant stride the compiler
// vectorizes.
template <typename A>
void store_run(A* d, const A* src, int64_t step, int64_t len) {
  if (!src) std::fill(d, d + len, A(0));
  else if (step == 1) std::memcpy(d, src, size_t(len) * sizeof(A));
  else if (step == 2)
    for (int64_t i = 0; i < len; ++i) d[i] = src[2 * i];
  else
    for (int64_t i = 0; i < len; ++i) d[i] = src[i * step];
}

// Rows [r0, r1) of the column matrix of `blk` (row r = (c, ky, kx), ld = blk.cols()) from the
// input channels of group `grp` (the input already in the compute type).
template <typename A>
void im2col_rows(const A* x, const Geom& g, int64_t grp, const Block& blk, int64_t r0, int64_t r1, A* col) {
  const int64_t ld = blk.cols();
  for (int64_t r = r0; r < r1; ++r) {
    A* row = col + r * ld;
    unfold_row_runs(x, g, grp, blk, r,
                    [row](int64_t at, const A* src, int64_t step, int64_t len) { store_run(row + at, src, step, len); });
  }
}

// A 4-D tensor (N, C, H, W) in the compute type with unit stride along W (unfolding copies runs of
// W): float32 and float64 tensors are used in place unless their W stride is not 1 (a
// channels-last or step-sliced view), then copied once, explicitly; half types are converted
// once, contiguous (not once per kernel tap during the unfolding). `strides` are p's.
template <typename T, typename A>
struct StagedInput {
  TensorPtr keep;
  std::unique_ptr<Scratch<A>> buf;
  const A* p = nullptr;
  Shape strides;

  explicit StagedInput(const Tensor& xt) {
    const Tensor* t = &xt;
    if constexpr (std::is_same_v<T, A>) {
      if (t->shape[3] > 1 && t->strides[3] != 1) {
        keep = contiguous(std::make_shared<Tensor>(*t));
        t = keep.get();
      }
      p = t->data<A>();
      strides = t->strides;
    } else {
      const int64_t C = t->shape[1], H = t->shape[2], W = t->shape[3];
      buf = std::make_unique<Scratch<A>>(t->shape[0] * C * H * W);
      A* dst = buf->p;
      const T* src = t->data<T>();
      const int64_t* st = t->strides.data();
      parallel_for(0, t->shape[0] * C * H, std::max<int64_t>(1, kGrain / std::max<int64_t>(W, 1)),
                   [&](int64_t r0, int64_t r1) {
                     for (int64_t r = r0; r < r1; ++r) {
                       const int64_t n = r / (C * H), c = r / H % C, y = r % H;
                       const T* s = src + n * st[0] + c * st[1] + y * st[2];
                       A* d = dst + r * W;
                       for (int64_t i = 0; i < W; ++i) d[i] = convert<A>(s[i * st[3]]);
                     }
                   });
      p = dst;
      strides = contiguous_strides(t->shape);
    }
  }
};

// The weight (O, Cg, KH, KW) as an O x K row-major matrix in the compute type: in place when it
// already is one, else staged.
template <typename T, typename A>
struct StagedWeight {
  std::unique_ptr<Scratch<A>> buf;
  const A* p = nullptr;

  explicit StagedWeight(const Tensor& w) {
    if constexpr (std::is_same_v<T, A>) {
      if (w.is_contiguous()) {
        p = w.data<A>();
        return;
      }
    }
    const int64_t O = w.shape[0], Cg = w.shape[1], KH = w.shape[2], KW = w.shape[3];
    buf = std::make_unique<Scratch<A>>(O * Cg * KH * KW);
    A* dst = buf->p;
    const T* src = w.data<T>();
    for (int64_t o = 0; o < O; ++o)
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t i = 0; i < KH; ++i)
          for (int64_t j = 0; j < KW; ++j)
            *dst++ = convert<A>(src[o * w.strides[0] + c * w.strides[1] + i * w.strides[2] + j * w.strides[3]]);
    p = buf->p;
  }
};

}  // namespace bm::cpu::conv_impl
