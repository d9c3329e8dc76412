// float32 convolutions on our own product kernel (conv_gemm.cpp): unfolded patches in panels,
// filters packed once and cached.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cpu/conv_pack_cache.h"

namespace bm::cpu {

namespace conv_impl {
struct Geom;
struct Block;
}

// The direct kernel's shared sizing (conv_direct.cpp). Whether `channels` fill at least three
// quarters of the kernel's channel blocks (32 on AVX-512, 16 on AVX2): else the panel path wastes
// less.
bool direct_fills_channel_blocks(int64_t channels);
// Whether the forward and weight-gradient direct kernels take this filter size: 1x1 only where
// the instruction set's kernel was measured faster than the panel kernel on it (kDirectPointwise).
bool direct_takes_filter(const conv_impl::Geom& g);
// [0, n) cut into runs of at most direct_pixels_max, as equal as possible: run i is
// [starts[i], starts[i + 1]) (no runs for n = 0).
std::vector<int64_t> direct_runs(int64_t n);
// Floats of one direct kernel call's outputs (at most 14 pixels x 32 channels, on AVX-512), with
// room for direct_store_row's turns, which read whole groups of 16 pixels (AVX-512) or 8 (AVX2)
// from where a block's second run starts (up to 13 + 16 pixels).
constexpr int kDirectMaxBlock = 1024;
// One direct kernel call over a group of output rows `width` pixels wide: `split` pixels from
// (row, x0) of the group, then R - split from the start of row + 1 (split = R: one row).
struct DirectRun {
  int64_t row, x0;
  int R, split;
};
// How rows of `width` pixels are cut into direct kernel calls: `group` rows at a time (a task),
// the full groups' calls in `full`, the last group's (height % group rows, where not 0) in `last`.
// Short rows go two to a call; rows at least a block wide are read as one run of pixels through
// the group, each call wrapping at most once into the next row, with the group chosen for the
// fewest calls (AVX2's 6-pixel blocks fill 7-wide rows with 6 rows to a group, where one row at a
// time made blocks of 4 and 3 pixels, too few accumulators to cover the FMA latency).
struct DirectRows {
  int64_t group = 1, groups = 0;
  std::vector<DirectRun> full, last;
};
DirectRows direct_rows(int64_t width, int64_t height);
// The padded input rows a direct kernel reads: rows -ph .. (OH - 1) sh + (KH - 1) dh - ph.
int64_t direct_padded_rows(const conv_impl::Geom& g);
// One row of a channels-last, zero-padded copy (the weight gradients' operands): pixels [lo, hi)
// of the Wp in d get d[xx * Cp + c] = src[c * xcs + (xx - lo) * cs * xws] for c < C, zeros for c
// in [C, Cp); the other pixels are zeros, and all of them where src is null. xws: the source's
// column stride; cs: every cs-th column kept. Turned 8 x 8 in registers (channels_last_rows) unless
// the source is strided along its row. tmp: channels_last_row_floats(hi - lo, cs, C) floats.
void channels_last_padded_row(const float* src, int64_t xcs, int64_t xws, int64_t cs, int64_t C, int64_t Cp,
                              int64_t Wp, int64_t lo, int64_t hi, float* d, float* tmp);
inline int64_t channels_last_row_floats(int64_t n, int64_t cs, int64_t C) {
  return n > 0 ? ((n - 1) * cs + 1) * C : 0;
}

// Whether conv2d_direct handles this convolution (conv_direct.cpp): one group, enough output
// channels to fill most of the kernel's channel blocks, unit stride along the input's rows.
bool direct_applies(const conv_impl::Geom& g);

// out = conv(x, w) + bias as conv2d_panel_gemm, without unfolding: output channels in the
// kernel's vectors, each input pixel broadcast from the input (or a zero-padded copy of it) where
// it lies (conv_direct.cpp). The same bits as conv2d_panel_gemm.
void conv2d_direct(const float* x, const conv_impl::Geom& g, const float* wm, const float* bias, float* out,
                   const int64_t* os, FilterOrigin origin = {});

// The pixel blocks both weight-gradient kernels sum separately and then add in order: tiles of one
// image, or whole images batched, of about 1024 pixels (conv_gemm_backward.cpp). Shared so that
// the two give the same bits.
std::vector<conv_impl::Block> weight_grad_pixel_blocks(const conv_impl::Geom& g);

// Whether conv2d_backward_weight_direct handles this convolution (conv_direct_backward.cpp): one
// group, kx not dilated, enough output channels to fill most of the direct kernel's channel blocks.
bool direct_weight_grad_applies(const conv_impl::Geom& g);

// gw (O x K row-major, contiguous) = the weight gradient of a one-group convolution on the direct
// kernel: x the input (strides g.xs), go grad_output (N, O, OH, OW) with strides gst. The same
// bits as conv2d_backward_weight_panel, whatever the thread count and instruction set
// (conv_direct_backward.cpp).
void conv2d_backward_weight_direct(const float* x, const conv_impl::Geom& g, const float* go, const int64_t* gst,
                                   float* gw);

// Whether conv2d_backward_input_direct handles this convolution (conv_direct_backward.cpp): one
// group, enough input channels to fill most of the direct kernel's channel blocks.
bool direct_input_grad_applies(const conv_impl::Geom& g);

// gx (N, C, H, W) with strides xs = the input gradient of a one-group convolution on the direct
// kernel, one stride phase at a time: wm the filters (O x K row-major), go grad_output (N, O, OH,
// OW) with strides gst; every element of gx is written. origin: where wm lives, for the filter
// cache. Bits independent of the thread count and of the instruction set.
void conv2d_backward_input_direct(const float* wm, const conv_impl::Geom& g, const float* go, const int64_t* gst,
                                  float* gx, const int64_t* xs, FilterOrigin origin = {});

// Whether conv2d_panel_gemm handles this convolution (one group, more than two output channels).
bool panel_gemm_applies(const conv_impl::Geom& g);

// out (N, O, OH, OW) with strides os = conv(x, w) + bias. x: the input (strides g.xs); wm: the
// filters as an O x K row-major matrix; bias: O floats or null.
// origin: where wm lives (conv_pack_cache.h), for the filter cache.
void conv2d_panel_gemm(const float* x, const conv_impl::Geom& g, const float* wm, const float* bias, float* out,
                       const int64_t* os, FilterOrigin origin = {});

// gw (O x K row-major, contiguous) = the weight gradient of a one-group convolution: x the input
// (strides g.xs), go grad_output (N, O, OH, OW) with strides gst. Bits independent of the thread
// count (conv_gemm_backward.cpp).
void conv2d_backward_weight_panel(const float* x, const conv_impl::Geom& g, const float* go, const int64_t* gst,
                                  float* gw);

// The input gradient's column matrix of each block of `blocks` (K x blk.cols(), row-major) =
// weight^T @ grad, handed to scatter (which adds it into the input, col2im) block after block.
// wm: the filters as O x K row-major; gs: grad_output as O rows of N * P columns. One group.
void conv2d_backward_input_panel(const float* wm, const conv_impl::Geom& g, const float* gs,
                                 const std::vector<conv_impl::Block>& blocks, int64_t cols_max,
                                 const std::function<void(const conv_impl::Block&, const float*)>& scatter);

}  // namespace bm::cpu
