// The weight gradient of float32 one-group convolutions on the panel product kernel
// (conv_winograd_kernels.h), instead of im2col + BLAS:
//   grad_w (O x K) = sum over output pixels of grad (O x pixels) @ columns^T (pixels x K),
// the pixels (images x output positions) being the depth of the product. The pixels are cut into
// blocks of about kDepth; per block, grad_output is packed as 6-row panels (pixel by pixel) and
// each task unfolds the input patches of 16 of the K columns (c, ky, kx) straight into one
// 16-column panel (pixel by pixel: im2col transposed) and multiplies it with every grad panel.
// The tasks are the K panels, so two threads are busy also for one image.
//
// The input gradient's columns (conv2d_backward_input_panel): columns (K x pixels) =
// weight^T (K x O) @ grad (O x pixels), depth O, with weight^T cut into 6-row panels once per call
// and grad into 16-pixel panels per column block; the caller adds the columns back into the input
// (col2im). Each column entry is one kernel sum, so the bits do not depend on the thread count.
//
// Determinism: each 6 x 16 block of grad_w is the sum of its per-pixel-block products added in
// block order, and a block's product is summed in a fixed order by the kernel; neither depends on
// which thread ran it, so the bits do not depend on the thread count.
#include "cpu/conv_gemm.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "core/parallel.h"
#include "cpu/conv_common.h"
#include "cpu/conv_winograd.h"

namespace bm::cpu {

using namespace conv_impl;

namespace {

constexpr int64_t kDepth = 1024;  // pixels per block: panels of 16 x 1024 floats (64 KiB) stay in L2

}  // namespace

std::vector<Block> weight_grad_pixel_blocks(const Geom& g) {
  const int64_t per_block = g.P >= kDepth ? 1 : std::max<int64_t>(1, kDepth / g.P);
  const int64_t tile = per_block > 1 ? g.P : std::min(g.P, kDepth);
  std::vector<Block> blocks;
  for (int64_t n0 = 0; n0 < g.N; n0 += per_block)
    for (int64_t p0 = 0; p0 < g.P; p0 += tile)
      blocks.push_back({n0, std::min(g.N, n0 + per_block), p0, std::min(g.P, p0 + tile)});
  return blocks;
}

namespace {

// Column r = (c, ky, kx) of the unfolded input of block `blk` into dst[col * kPanelCols] for the
// block's pixel columns col; positions in the padding get zero.
void unfold_column(const float* x, const Geom& g, const Block& blk, int64_t r, float* dst) {
  unfold_row_runs(x, g, 0, blk, r, [dst](int64_t col, const float* src, int64_t step, int64_t len) {
    float* d = dst + col * kPanelCols;
    if (!src)
      for (int64_t i = 0; i < len; ++i) d[i * kPanelCols] = 0.0f;
    else
      for (int64_t i = 0; i < len; ++i) d[i * kPanelCols] = src[i * step];
  });
}

}  // namespace

void conv2d_backward_weight_panel(const float* x, const Geom& g, const float* go, const int64_t* gst, float* gw) {
  const WinogradKernels& k = winograd_kernels();
  const int64_t O = g.O, K = g.K, OP = (O + kPanelRows - 1) / kPanelRows, KP = (K + kPanelCols - 1) / kPanelCols;
  const std::vector<Block> blocks = weight_grad_pixel_blocks(g);
  int64_t depth_max = 0;
  for (const Block& b : blocks) depth_max = std::max(depth_max, b.cols());
  Scratch<float> a(OP * kPanelRows * depth_max);
  std::fill(gw, gw + O * K, 0.0f);
  for (const Block& blk : blocks) {
    const int64_t D = blk.cols();
    // grad_output as panels of 6 channels: grad[o][pixel j] at a[(o / 6) * D * 6 + j * 6 + o % 6].
    parallel_for(0, OP, std::max<int64_t>(1, 4096 / D), [&](int64_t q0, int64_t q1) {
      for (int64_t op = q0; op < q1; ++op) {
        float* panel = a.p + op * D * kPanelRows;
        for (int64_t r = 0; r < kPanelRows; ++r) {
          const int64_t o = op * kPanelRows + r;
          if (o >= O) {
            for (int64_t j = 0; j < D; ++j) panel[j * kPanelRows + r] = 0.0f;
            continue;
          }
          float* d = panel + r;
          for (int64_t n = blk.n0; n < blk.n1; ++n) {
            const float* src = go + n * gst[0] + o * gst[1];
            for (int64_t p = blk.p0; p < blk.p1;) {  // output row by output row (no division per pixel)
              const int64_t oy = p / g.OW, ox0 = p % g.OW, ox1 = std::min(g.OW, ox0 + (blk.p1 - p));
              const float* s = src + oy * gst[2];
              for (int64_t ox = ox0; ox < ox1; ++ox, d += kPanelRows) *d = s[ox * gst[3]];
              p += ox1 - ox0;
            }
          }
        }
      }
    });
    parallel_for(0, KP, 1, [&](int64_t q0, int64_t q1) {
      Scratch<float> b(D * kPanelCols);
      float c[kPanelRows * kPanelCols];
      for (int64_t kp = q0; kp < q1; ++kp) {
        const int64_t cols = std::min<int64_t>(kPanelCols, K - kp * kPanelCols);
        for (int64_t j = 0; j < kPanelCols; ++j) {
          if (j < cols) {
            unfold_column(x, g, blk, kp * kPanelCols + j, b.p + j);
          } else {
            for (int64_t i = 0; i < D; ++i) b.p[i * kPanelCols + j] = 0.0f;
          }
        }
        for (int64_t op = 0; op < OP; ++op) {
          k.panel_product(a.p + op * D * kPanelRows, b.p, D, c, kPanelCols);
          const int64_t rows = std::min<int64_t>(kPanelRows, O - op * kPanelRows);
          for (int64_t r = 0; r < rows; ++r) {
            float* dst = gw + (op * kPanelRows + r) * K + kp * kPanelCols;
            for (int64_t j = 0; j < cols; ++j) dst[j] += c[r * kPanelCols + j];
          }
        }
      }
    });
  }
}

void conv2d_backward_input_panel(const float* wm, const Geom& g, const float* gs, const std::vector<Block>& blocks,
                                 int64_t cols_max, const std::function<void(const Block&, const float*)>& scatter) {
  const WinogradKernels& k = winograd_kernels();
  const int64_t O = g.O, K = g.K, NP = g.N * g.P, KP = (K + kPanelRows - 1) / kPanelRows;
  // weight^T as panels of 6 rows (k), depth o: w[o][k] at a[((k / 6) * O + o) * 6 + k % 6].
  Scratch<float> a(KP * O * kPanelRows);
  parallel_for(0, KP, std::max<int64_t>(1, 4096 / (O * kPanelRows)), [&](int64_t q0, int64_t q1) {
    for (int64_t kp = q0; kp < q1; ++kp)
      for (int64_t o = 0; o < O; ++o)
        for (int64_t r = 0; r < kPanelRows; ++r) {
          const int64_t kk = kp * kPanelRows + r;
          a.p[(kp * O + o) * kPanelRows + r] = kk < K ? wm[o * K + kk] : 0.0f;
        }
  });
  const int64_t jp_max = (cols_max + kPanelCols - 1) / kPanelCols;
  Scratch<float> b(jp_max * O * kPanelCols);
  Scratch<float> col(K * cols_max);
  for (const Block& blk : blocks) {
    const int64_t cols = blk.cols(), JP = (cols + kPanelCols - 1) / kPanelCols;
    const float* src = gs + blk.n0 * g.P + blk.p0;  // the block's columns are contiguous in each row
    // grad as panels of 16 columns, depth o: grad[o][j] at b[((j / 16) * O + o) * 16 + j % 16].
    parallel_for(0, JP, std::max<int64_t>(1, 4096 / (O * kPanelCols)), [&](int64_t q0, int64_t q1) {
      for (int64_t jp = q0; jp < q1; ++jp) {
        const int64_t n = std::min<int64_t>(kPanelCols, cols - jp * kPanelCols);
        for (int64_t o = 0; o < O; ++o) {
          float* d = b.p + (jp * O + o) * kPanelCols;
          const float* s = src + o * NP + jp * kPanelCols;
          std::copy(s, s + n, d);
          std::fill(d + n, d + kPanelCols, 0.0f);
        }
      }
    });
    // One (column panel, row panel) pair per task, column panel outermost (kept in cache).
    parallel_for(0, JP * KP, 1, [&](int64_t q0, int64_t q1) {
      float c[kPanelRows * kPanelCols];
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t jp = q / KP, kp = q % KP;
        k.panel_product(a.p + kp * O * kPanelRows, b.p + jp * O * kPanelCols, O, c, kPanelCols);
        const int64_t rows = std::min<int64_t>(kPanelRows, K - kp * kPanelRows);
        const int64_t n = std::min<int64_t>(kPanelCols, cols - jp * kPanelCols);
        for (int64_t r = 0; r < rows; ++r)
          std::copy(c + r * kPanelCols, c + r * kPanelCols + n, col.p + (kp * kPanelRows + r) * cols + jp * kPanelCols);
      }
    });
    scatter(blk, col.p);
  }
}

}  // namespace bm::cpu
