// Winograd convolution for float32 with 3x3 filters, dilation 1, one group (conv_winograd.cpp): at
// stride 1, F(2x2, 3x3), a 2x2 block of outputs costs 16 multiplications per (input, output)
// channel pair instead of 36, done as 16 matrix products; at stride 2, 25 instead of 36
// (conv_winograd_s2_kernels.h). The transforms and the product kernel live in
// conv_winograd_kernels.h, compiled for the baseline target and, on x86-64, again with AVX2 + FMA
// and with AVX-512 (chosen at run time by what the CPU supports).
#pragma once
#include <cstdint>
#include <vector>

#include "cpu/conv_pack_cache.h"

namespace bm::cpu {

namespace conv_impl {
struct Geom;
}

// The products run on blocks of kPanelRows output channels x kPanelCols tiles.
constexpr int kPanelRows = 6, kPanelCols = 16;

// The transforms and the product kernel of one instruction set (see conv_winograd_kernels.h for
// their contracts).
struct WinogradKernels {
  void (*weight_run)(const float* w, int64_t c0, int64_t c1, float* dst, int64_t ldxi, int64_t cs);
  void (*input_run)(const float* plane, int64_t H, int64_t W, int64_t rs, int64_t ph, int64_t pw, int64_t ty,
                    int64_t txa, int64_t txb, float* dst, int64_t ldxi, int64_t ps, int64_t col);
  void (*output_run)(const float* m, int64_t ldxi, float bias, float* plane, int64_t OH, int64_t OW, int64_t os2,
                     int64_t os3, int64_t ty, int64_t txa, int64_t txb);
  void (*panel_product)(const float* a, const float* b, int64_t K, float* c, int64_t ldc);
  // Two column panels at once (the second kPanelCols columns of b start K * kPanelCols floats
  // later, and go to c + kPanelCols): one pass over a's panel; AVX-512 holds the 6 x 32 block in
  // 12 registers. Each element's sum is the same as panel_product's, bit for bit.
  void (*panel_product2)(const float* a, const float* b, int64_t K, float* c, int64_t ldc);
  // Two row panels at once (the second kPanelRows rows of a start K * kPanelRows floats later,
  // and go to c + kPanelRows * ldc) against one column panel: for a lone column panel, 12
  // AVX-512 accumulators instead of 6. The same bits as panel_product.
  void (*panel_product_rows2)(const float* a, const float* b, int64_t K, float* c, int64_t ldc);
  // The direct convolution's kernel (conv_direct_kernels.h): acc[i * direct_channels + j] = sum over
  // k of w[k * direct_channels + j] * x[off[k] + pix(i)], for R (1 .. direct_pixels_max) pixels:
  // pix(i) = s i for i < split, rs + s (i - split) for the rest (split = R: one run). The same bits
  // as panel_product on unfolded columns.
  void (*direct_pixels)(const float* w, const float* x, int64_t s, int64_t rs, int split, const int32_t* off,
                        int64_t K, int R, float* acc);
  int direct_channels, direct_pixels_max;
  // Whether 1x1 convolutions take the direct kernel (forward, weight gradient) or the panel kernel
  // (measured per instruction set: conv_direct_kernels.h).
  bool direct_pointwise;
  // dst[x * C + c] = src[c * cs + x] for x < n, c < C (conv_direct_kernels.h).
  void (*channels_last_rows)(const float* src, int64_t cs, int64_t C, int64_t n, float* dst);
  // out[j * cs + i] = acc[i * cb + j] (+ bias[j]) for i < R, j < channels: a direct kernel's row of
  // outputs into adjacent pixels of `channels` planes (conv_direct_kernels.h).
  void (*direct_store_row)(const float* acc, int R, int64_t channels, int64_t cb, const float* bias, float* out,
                           int64_t cs);
  // The weight gradient's transforms, 16 channels in the vector (conv_winograd_grad_kernels.h).
  void (*wgrad_input_tiles)(const float* x, int64_t rs, int64_t Cp, int64_t tiles, float* dst, int64_t ldxi);
  void (*wgrad_grad_tiles)(const float* gy, int64_t rs, int64_t Op, int64_t tiles, float* dst, int64_t ldxi,
                           int64_t obs, int64_t cb);
  // The transforms at stride 2 (conv_winograd_s2_kernels.h): the contracts of weight_run,
  // input_run and output_run, 25 elements a tile.
  void (*weight_run_s2)(const float* w, int64_t c0, int64_t c1, float* dst, int64_t ldxi, int64_t cs);
  void (*input_run_s2)(const float* plane, int64_t H, int64_t W, int64_t rs, int64_t ph, int64_t pw, int64_t ty,
                       int64_t txa, int64_t txb, float* dst, int64_t ldxi, int64_t ps, int64_t col);
  void (*output_run_s2)(const float* m, int64_t ldxi, float bias, float* plane, int64_t OH, int64_t OW, int64_t os2,
                        int64_t os3, int64_t ty, int64_t txa, int64_t txb);
  // (wgrad_grad_tiles_s2 writes the 9 distinct elements of its 25: element (u, v) is at
  // 3 kWgradSlotS2[u] + kWgradSlotS2[v].)
  void (*wgrad_input_tiles_s2)(const float* x, int64_t rs, int64_t Cp, int64_t tiles, float* dst, int64_t ldxi);
  void (*wgrad_grad_tiles_s2)(const float* gy, int64_t rs, int64_t Op, int64_t tiles, float* dst, int64_t ldxi,
                              int64_t obs, int64_t cb);
};

// Where the stride-2 weight gradient's grad transform keeps element u of an axis (3 and 4 repeat 0
// and 2: conv_winograd_grad_kernels.h).
constexpr int kWgradSlotS2[5] = {0, 1, 2, 0, 2};

// The widest set the CPU runs (AVX-512 or AVX2 + FMA where built and supported, else the
// baseline), or the one BESSEMER_CPU_ISA asks for (cpu/isa.h).
const WinogradKernels& winograd_kernels();
#if defined(BESSEMER_WINOGRAD_AVX2)
const WinogradKernels& winograd_kernels_avx2();    // isa/conv_winograd_avx2.cpp
const WinogradKernels& winograd_kernels_avx512();  // isa/conv_winograd_avx512.cpp
#endif

// Tiles [txa, txb) of tile row ty of image n; `col`: tile txa's index within its block.
struct TileRun {
  int64_t n, ty, txa, txb, col;
};
// Tiles [t0, t1) of N x TY x TX (numbered by image, tile row, tile) as runs along tile rows.
void tile_runs(int64_t t0, int64_t t1, int64_t TY, int64_t TX, std::vector<TileRun>& runs);

// Whether conv2d_winograd handles this convolution, and is expected to be faster than unfolding.
bool winograd_applies(const conv_impl::Geom& g);
// The shape conditions both stride-2 Winograd paths (forward, weight gradient) need before the
// machine's: 64+ channels each way, 128+ output tiles, partial tiles adding at most 15%.
bool stride2_shape_pays(const conv_impl::Geom& g);

// out (N, O, OH, OW) with strides os = conv(x, w) + bias. x: the input (strides g.xs, unit stride
// along W); wm: the filters as an O x (C * 9) row-major matrix; bias: O floats or null.
// origin: where wm lives (conv_pack_cache.h), for the filter cache. turned: wm holds the filters
// of the convolution whose input gradient this is, (C x O x 3 x 3): they are used turned by 180
// degrees with the two channel counts swapped, and cached that way under wm.
void conv2d_winograd(const float* x, const conv_impl::Geom& g, const float* wm, const float* bias, float* out,
                     const int64_t* os, FilterOrigin origin = {}, bool turned = false);

// Whether conv2d_backward_weight_winograd handles this convolution: 3x3, dilation 1, one group,
// stride 1 with 32+ channels each way or stride 2 with 64+.
bool winograd_weight_grad_applies(const conv_impl::Geom& g);

// gw (O x C * 9 row-major, contiguous) = the weight gradient by Winograd (stride 1 or 2): x the input
// (strides g.xs, unit stride along W), go grad_output (N, O, OH, OW) with strides gst
// (conv_winograd_backward.cpp). Bits independent of the thread count and of the instruction set.
void conv2d_backward_weight_winograd(const float* x, const conv_impl::Geom& g, const float* go, const int64_t* gst,
                                     float* gw);

}  // namespace bm::cpu
