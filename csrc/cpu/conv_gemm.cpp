// float32 convolutions (one group) that Winograd does not take, on our own product kernel: the
// unfolded input patches (im2col) are written straight into the kernel's 16-column panels, the
// filters are cut into 6-row panels once and cached (conv_pack_cache.h), and the product runs on
// our thread pool, each 6 x 16 block of outputs stored with its bias. BLAS is not used: its threads
// wait for work by spinning, which on a busy 2-core machine costs more than the product, and
// handing it one product per block of columns adds a thread start each time.
#include "cpu/conv_gemm.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "core/parallel.h"
#include "cpu/conv_common.h"
#include "cpu/conv_pack_cache.h"
#include "cpu/conv_winograd.h"

namespace bm::cpu {

using namespace conv_impl;

namespace {

constexpr int kPanelFilters = 2;                    // conv_pack_cache.h: this file's kind of entry
constexpr int64_t kBlockFloats = int64_t(1) << 19;  // unfolded columns of one block (2 MiB)

// Rows [r0, r1) (r = (c, ky, kx)) of the column matrix of block `blk`, written as panels of 16
// columns: entry (r, col) at dst[(col / 16) * K * 16 + r * 16 + col % 16]; columns from the
// block's width to the end of its last panel are zero.
void unfold_to_panels(const float* x, const Geom& g, const Block& blk, int64_t r0, int64_t r1, float* dst) {
  const int64_t ps = g.K * kPanelCols, cols = blk.cols(), end = (cols + kPanelCols - 1) / kPanelCols * kPanelCols;
  for (int64_t r = r0; r < r1; ++r) {
    float* row = dst + r * kPanelCols;
    // Columns [col, col + len) from src[i * step], split at panel edges; src null: zeros.
    auto put = [&](int64_t col, const float* src, int64_t step, int64_t len) {
      while (len > 0) {
        const int64_t seg = std::min(len, kPanelCols - col % kPanelCols);
        store_run(row + (col / kPanelCols) * ps + col % kPanelCols, src, step, seg);
        if (src) src += seg * step;
        col += seg, len -= seg;
      }
    };
    unfold_row_runs(x, g, 0, blk, r, put);
    put(cols, nullptr, 0, end - cols);
  }
}

}  // namespace

bool panel_gemm_applies(const Geom& g) { return g.G == 1 && g.O > 2; }

void conv2d_panel_gemm(const float* x, const Geom& g, const float* wm, const float* bias, float* out,
                       const int64_t* os, FilterOrigin origin) {
  const WinogradKernels& k = winograd_kernels();
  const int64_t O = g.O, K = g.K, OP = (O + kPanelRows - 1) / kPanelRows;
  // The filters as panels of 6 rows, column by column.
  const std::shared_ptr<const PackedFilters> filters = row_blocked_filters(kPanelFilters, wm, O, K, kPanelRows, origin);
  const float* a = filters->packed.data();

  // Column blocks: tiles of one image, or whole images, of whole panels within kBlockFloats.
  const int64_t max_cols = std::max<int64_t>(4 * kPanelCols, kBlockFloats / K / kPanelCols * kPanelCols);
  const int64_t per_block = g.P >= max_cols ? 1 : std::max<int64_t>(1, max_cols / g.P);
  const int64_t tile = per_block > 1 ? g.P : max_cols;
  const int64_t cols_max = per_block > 1 ? per_block * g.P : std::min(g.P, tile);
  const int64_t jp_max = (cols_max + kPanelCols - 1) / kPanelCols;
  Scratch<float> b(jp_max * kPanelCols * K);
  std::vector<int64_t> base(size_t(jp_max * kPanelCols));  // column -> output offset of channel 0
  for (int64_t n0 = 0; n0 < g.N; n0 += per_block) {
    for (int64_t p0 = 0; p0 < g.P; p0 += tile) {
      const Block blk{n0, std::min(g.N, n0 + per_block), p0, std::min(g.P, p0 + tile)};
      const int64_t cols = blk.cols(), JP = (cols + kPanelCols - 1) / kPanelCols, per = blk.p1 - blk.p0;
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t n = blk.n0 + j / per, p = blk.p0 + j % per;
        base[size_t(j)] = n * os[0] + (p / g.OW) * os[2] + (p % g.OW) * os[3];
      }
      parallel_for(0, K, std::max<int64_t>(1, 8192 / cols),
                   [&](int64_t r0, int64_t r1) { unfold_to_panels(x, g, blk, r0, r1, b.p); });
      // One (two adjacent column panels, row panel) pair per task, column panels outermost: a
      // thread keeps its column panels in cache while the filter panels stream past, each read
      // once for both.
      const int64_t JP2 = (JP + 1) / 2;
      parallel_for(0, JP2 * OP, 1, [&](int64_t q0, int64_t q1) {
        constexpr int64_t ld = 2 * kPanelCols;
        float acc[kPanelRows * ld];
        for (int64_t q = q0; q < q1; ++q) {
          const int64_t jp = 2 * (q / OP), op = q % OP;
          const bool pair = jp + 1 < JP;
          (pair ? k.panel_product2 : k.panel_product)(a + op * K * kPanelRows, b.p + jp * K * kPanelCols, K, acc, ld);
          const int64_t rows = std::min<int64_t>(kPanelRows, O - op * kPanelRows);
          const int64_t ncol = std::min<int64_t>(pair ? ld : kPanelCols, cols - jp * kPanelCols);
          const int64_t* bj = base.data() + jp * kPanelCols;
          // Columns in one run of the output (one image's pixels, a contiguous plane): a loop the
          // compiler vectorizes; else a store per element.
          const bool run = bj[ncol - 1] - bj[0] == ncol - 1;
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t o = op * kPanelRows + r;
            const float bv = bias ? bias[o] : 0.0f;
            float* dst = out + o * os[1];
            const float* src = acc + r * ld;
            if (run) {
              float* d = dst + bj[0];
              for (int64_t j = 0; j < ncol; ++j) d[j] = src[j] + bv;
            } else {
              for (int64_t j = 0; j < ncol; ++j) dst[bj[j]] = src[j] + bv;
            }
          }
        }
      });
    }
  }
}

}  // namespace bm::cpu
