// Winograd convolution on the CPU (float32, 3x3 filters, stride 1 by F(2x2, 3x3) or stride 2 by
// conv_winograd_s2_kernels.h's transforms, dilation 1, one group). The output is cut into 2x2
// tiles, numbered t = (n, ty, tx) over all images; a tile has xi = 16 (stride 1) or 25 (stride 2)
// elements in the transform domain. Tiles are processed in blocks small enough that the block's
// transformed inputs and products stay in cache:
//   filters: U[xi] (O x C) = (G g G^T)[xi] for each (o, c), cached (conv_pack_cache.h);
//   inputs:  V[xi] (C x tiles) = (B^T d B)[xi] for each (c, tile), by our threads;
//   products: M[xi] (O x tiles) = U[xi] @ V[xi], one product per xi by our own register-blocked
//             kernel (the operands are written in its panel layouts by the transforms: no packing);
//   outputs: Y = A^T M A + bias for each (o, tile), written into the output, by our threads.
// Float32 rounding differs from unfolding (the transforms add and scale), well inside the
// tolerances float32 convolutions are held to (tests/test_conv.py compares with torch).
#include "cpu/conv_winograd.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "core/parallel.h"
#include "cpu/conv_common.h"
#include "cpu/conv_pack_cache.h"
#include "cpu/isa.h"

#define BM_WINO_NS wino_base
#include "cpu/conv_winograd_kernels.h"

namespace bm::cpu {

using namespace conv_impl;

namespace {

constexpr int64_t kXi = 16;    // elements of a transformed 4x4 tile (stride 1)
constexpr int64_t kXiS2 = 25;  // of a 5x5 one (stride 2)
constexpr int64_t kBlockFloats = int64_t(1) << 20;  // transformed inputs + products of one block (4 MiB)
// The same for a block one thread runs alone (512 KiB): within a core's L2 (1 MiB on Zen 4, 2 MiB
// on recent Intel) with room for the filters.
constexpr int64_t kLocalFloats = int64_t(128) << 10;

// The distance between the 16 matrices of the transform domain, at least n floats. A tile's
// transform stores to (or loads from) all 16 at once; 16 addresses a multiple of 4 KiB apart
// fall in one set of the L1 cache (which holds 8 to 12 lines of a set) and evict each other. That
// happened whenever the channel count was a multiple of 64: the input transform ran at a third
// of its speed. Rounded up to 4 KiB and one cache line on, the 16 land in 16 different sets.
int64_t set_spread_stride(int64_t n) { return (n + 1023) / 1024 * 1024 + 16; }

}  // namespace

const WinogradKernels& winograd_kernels() {
#if defined(BESSEMER_WINOGRAD_AVX2)
  switch (cpu_isa()) {  // what the CPU has, or less where BESSEMER_CPU_ISA says so
    case Isa::avx512:
      return winograd_kernels_avx512();
    case Isa::avx2:
      return winograd_kernels_avx2();
    default:
      break;
  }
#endif
  return wino_base::kernels();
}

namespace {

constexpr int kWinogradFilters = 1;  // conv_pack_cache.h: this file's kinds of entry
constexpr int kWinogradTurnedFilters = 4;
constexpr int kWinogradS2Filters = 6;

// The transforms of one stride: stride 1 (F(2x2, 3x3), 16 elements a tile) or stride 2
// (conv_winograd_s2_kernels.h, 25). Everything else, the products included, is shared.
struct Form {
  int64_t xi;
  int kind;  // the filters' cache entry
  decltype(WinogradKernels::weight_run) weight_run;
  decltype(WinogradKernels::input_run) input_run;
  decltype(WinogradKernels::output_run) output_run;
};

Form form_of(const WinogradKernels& k, const Geom& g, bool turned) {
  if (g.sh == 2) return {kXiS2, kWinogradS2Filters, k.weight_run_s2, k.input_run_s2, k.output_run_s2};
  return {kXi, turned ? kWinogradTurnedFilters : kWinogradFilters, k.weight_run, k.input_run, k.output_run};
}

// U[xi] for the O x (C * 9) filters wm, zero padding rows (layout: see conv2d_winograd); with
// `turned`, for wm's (C x O x 3 x 3) filters turned by 180 degrees and transposed, cached under
// wm itself, so an input gradient finds them without turning the filters again.
std::shared_ptr<const PackedFilters> winograd_filters(const Form& f, const float* wm, int64_t O, int64_t C,
                                                      FilterOrigin origin, bool turned) {
  const int64_t OP = (O + kPanelRows - 1) / kPanelRows;
  return packed_filters(f.kind, wm, turned ? C : O, turned ? O * 9 : C * 9, size_t(f.xi * OP * kPanelRows * C),
                        [&](float* u) {
    parallel_for(0, O, std::max<int64_t>(1, 256 / std::max<int64_t>(C, 1)), [&](int64_t o0, int64_t o1) {
      std::vector<float> row(static_cast<size_t>(turned ? C * 9 : 0));
      for (int64_t o = o0; o < o1; ++o) {
        const float* w = wm + o * C * 9;
        if (turned) {  // row[c][8 - t] = wm[c][o][t]
          for (int64_t c = 0; c < C; ++c)
            for (int64_t t = 0; t < 9; ++t) row[size_t(c * 9 + 8 - t)] = wm[(c * O + o) * 9 + t];
          w = row.data();
        }
        f.weight_run(w, 0, C, u + (o / kPanelRows) * C * kPanelRows + o % kPanelRows, OP * C * kPanelRows,
                     kPanelRows);
      }
    });
  }, origin);
}

// The 2x2 output tiles of one image; times g.N, of the batch.
int64_t image_tiles(const Geom& g) { return ((g.OH + 1) / 2) * ((g.OW + 1) / 2); }

}  // namespace

void tile_runs(int64_t t0, int64_t t1, int64_t TY, int64_t TX, std::vector<TileRun>& runs) {
  runs.clear();
  for (int64_t t = t0; t < t1;) {
    const int64_t n = t / (TY * TX), ty = t / TX % TY, tx = t % TX, end = std::min(t1 - t, TX - tx);
    runs.push_back({n, ty, tx, tx + end, t - t0});
    t += end;
  }
}

bool stride2_shape_pays(const Geom& g) {
  const int64_t per_image = image_tiles(g);
  return g.C >= 64 && g.O >= 64 && g.N * per_image >= 128 && 4 * per_image * 20 <= g.OH * g.OW * 23;
}

bool winograd_applies(const Geom& g) {
  if (g.KH != 3 || g.KW != 3 || g.sh != g.sw || g.sh > 2 || g.dh != 1 || g.dw != 1 || g.G != 1) return false;
  // Few channels: the products are too thin to run near the peak and the transforms
  // dominate; unfolding is as fast.
  if (g.C < 16 || g.O < 16) return false;
  // Fewer tiles than a panel's width: the product kernel would mostly multiply padding.
  if (g.sh == 1) return g.N * image_tiles(g) >= kPanelCols;
  // Stride 2 saves less (25 products a tile instead of 36, against 16 instead of 36), so the
  // transforms must stay small beside the products, and the direct kernel it replaces runs near
  // the FMA peak. Measured on Zen 4 (2 threads, batch 1 and 8, 16 to 512 channels, outputs 7 to
  // 56 wide), it wins, by 7-40%, where every condition below holds: 64+ channels each way (fewer:
  // 0.73-1.07x), 128+ tiles (fewer, where blocks are shared among the threads: 0.88-0.99x), and
  // odd output sizes' partial tiles adding at most 15% (7 x 7: 0.81-0.97x).
  if (!stride2_shape_pays(g)) return false;
  if (cpu_zen3_or_zen4()) return true;
  // Cores with two 512-bit FMA units (an Intel Xeon, Emerald Rapids, alternating in one process)
  // run the direct kernel at twice the multiplications a cycle, and the transforms' memory
  // traffic weighs more: 64 -> 128 on 28-wide outputs 0.81-0.95x, 128 -> 256 on 14-wide 0.98x;
  // 128 -> 256 on 28-wide 1.15-1.26x, 64 -> 128 on 56-wide 1.03-1.15x. (Other x86 and ARM cores:
  // not measured; the same, cautious rule.)
  return g.OW >= 56 || (g.OW >= 28 && g.C >= 128);
}

namespace {

// Where one convolution's blocks of tiles live: their size and the layout of V and M (see
// conv2d_winograd).
struct BlockLayout {
  int64_t tb, ldv, ldm, ldmi;
  BlockLayout(int64_t tiles, int64_t C, int64_t Opad) : tb(tiles), ldm(tiles) {
    ldv = set_spread_stride(tiles / kPanelCols * C * kPanelCols);
    ldmi = set_spread_stride(Opad * ldm);
  }
};

// Tiles per block: the block's transformed inputs and products (xi * (C + Opad) floats a tile)
// within `floats`, at least two panels, whole panels, at most the T tiles there are (rounded up).
int64_t tiles_per_block(int64_t floats, int64_t xi, int64_t T, int64_t C, int64_t Opad) {
  const int64_t tb = std::max<int64_t>(2 * kPanelCols, floats / (xi * (C + Opad)));
  return std::min(tb, T + kPanelCols - 1) / kPanelCols * kPanelCols;
}

// Runs fn(0, n) on the calling thread, or split over the threads with parallel_for.
void stage(bool split, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (split) parallel_for(0, n, grain, fn);
  else if (n > 0) fn(0, n);
}

// The products and outputs of a block's row-panel pairs [g0, g1) (output channels 12 g0 on): for
// each pair, its rows of M[xi] = U[xi] @ V[xi] for every xi, into the compact scratch mp (matrix
// xi at mp + xi * pair_stride(ldm), rows ldm apart), then transformed back into the output while
// they are still in cache. (Done stage by stage, all of M, up to 25 x Opad x 32 floats across as
// many pages, was written out of L2 before the output transform read it back: with 128-256
// output channels at stride 2 the transform then waited on memory for an eighth of the
// convolution.) Each element of M is the sum the staged order gives: the same bits.
int64_t pair_stride(int64_t ldm) { return 2 * kPanelRows * ldm + 16; }  // + a line: the xi in different L1 sets

void products_and_outputs(const WinogradKernels& k, const Form& f, const Geom& g, const float* u, const float* bias,
                          float* out, const int64_t* os, const BlockLayout& L, int64_t nb, const float* v, float* mp,
                          const std::vector<TileRun>& runs, int64_t g0, int64_t g1) {
  const int64_t C = g.C, O = g.O, OP = (O + kPanelRows - 1) / kPanelRows;
  const int64_t JP = (nb + kPanelCols - 1) / kPanelCols, ldv = L.ldv, ldm = L.ldm, ldq = pair_stride(ldm);
  for (int64_t pg = g0; pg < g1; ++pg) {
    const int64_t op0 = 2 * pg, rows = std::min<int64_t>(2, OP - op0);
    for (int64_t xi = 0; xi < f.xi; ++xi) {
      const float* a = u + (xi * OP + op0) * C * kPanelRows;
      const float* b = v + xi * ldv;
      float* c = mp + xi * ldq;
      int64_t jp = 0;
      for (; jp + 1 < JP; jp += 2)
        for (int64_t r = 0; r < rows; ++r)
          k.panel_product2(a + r * C * kPanelRows, b + jp * C * kPanelCols, C,
                           c + r * kPanelRows * ldm + jp * kPanelCols, ldm);
      if (jp < JP) {  // a lone column panel: both row panels at once
        if (rows == 2) k.panel_product_rows2(a, b + jp * C * kPanelCols, C, c + jp * kPanelCols, ldm);
        else k.panel_product(a, b + jp * C * kPanelCols, C, c + jp * kPanelCols, ldm);
      }
    }
    const int64_t o0 = op0 * kPanelRows;
    for (int64_t o = o0; o < std::min(O, (op0 + rows) * kPanelRows); ++o)
      for (const TileRun& r : runs)
        f.output_run(mp + (o - o0) * ldm + r.col, ldq, bias ? bias[o] : 0.0f, out + r.n * os[0] + o * os[1], g.OH,
                     g.OW, os[2], os[3], r.ty, r.txa, r.txb);
  }
}

// Tiles [t0, t1) (at most L.tb): their inputs transformed into v, the f.xi products into m, and
// the products transformed back into the output. With `split` each stage is shared among the
// threads; without, the calling thread does the whole block, the last two stages by
// products_and_outputs (m its compact scratch).
void winograd_block(const WinogradKernels& k, const Form& f, const float* x, const Geom& g, const float* u,
                    const float* bias, float* out, const int64_t* os, const BlockLayout& L, int64_t t0, int64_t t1,
                    float* v, float* m, bool split, std::vector<TileRun>& runs) {
  const int64_t C = g.C, O = g.O, OP = (O + kPanelRows - 1) / kPanelRows;
  const int64_t TY = (g.OH + 1) / 2, TX = (g.OW + 1) / 2;
  const int64_t nb = t1 - t0, JP = (nb + kPanelCols - 1) / kPanelCols, ldv = L.ldv, ldm = L.ldm, ldmi = L.ldmi;
  tile_runs(t0, t1, TY, TX, runs);
  if (nb % kPanelCols != 0) {  // the last panel's columns past nb: zeros, not stale values
    for (int64_t xi = 0; xi < f.xi; ++xi) {
      float* p = v + xi * ldv + (JP - 1) * C * kPanelCols;
      std::fill(p, p + C * kPanelCols, 0.0f);
    }
  }
  const int64_t R = int64_t(runs.size());
  stage(split, C * R, std::max<int64_t>(1, 64 / std::max<int64_t>(1, nb / R)), [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t c = q / R;
      const TileRun& r = runs[size_t(q % R)];
      f.input_run(x + r.n * g.xs[0] + c * g.xs[1], g.H, g.W, g.xs[2], g.ph, g.pw, r.ty, r.txa, r.txb,
                  v + c * kPanelCols, ldv, C * kPanelCols, r.col);
    }
  });
  if (!split) {
    products_and_outputs(k, f, g, u, bias, out, os, L, nb, v, m, runs, 0, (OP + 1) / 2);
    return;
  }
  // M[xi] = U[xi] @ V[xi], one (xi, two 16-column panels) pair per task, all row panels of
  // U[xi] against the two column panels (which stay in cache; they are adjacent in V).
  const int64_t JP2 = (JP + 1) / 2;
  stage(split, f.xi * JP2, 1, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t xi = q / JP2, jp = 2 * (q % JP2);
      const float* b = v + xi * ldv + jp * C * kPanelCols;
      float* c = m + xi * ldmi + jp * kPanelCols;
      if (jp + 1 < JP) {
        for (int64_t op = 0; op < OP; ++op)
          k.panel_product2(u + (xi * OP + op) * C * kPanelRows, b, C, c + op * kPanelRows * ldm, ldm);
      } else {  // a lone column panel: two row panels at a time (adjacent in U)
        int64_t op = 0;
        for (; op + 1 < OP; op += 2)
          k.panel_product_rows2(u + (xi * OP + op) * C * kPanelRows, b, C, c + op * kPanelRows * ldm, ldm);
        if (op < OP) k.panel_product(u + (xi * OP + op) * C * kPanelRows, b, C, c + op * kPanelRows * ldm, ldm);
      }
    }
  });
  stage(split, O * R, std::max<int64_t>(1, 64 / std::max<int64_t>(1, nb / R)), [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t o = q / R;
      const TileRun& r = runs[size_t(q % R)];
      f.output_run(m + o * ldm + r.col, ldmi, bias ? bias[o] : 0.0f, out + r.n * os[0] + o * os[1], g.OH, g.OW,
                   os[2], os[3], r.ty, r.txa, r.txb);
    }
  });
}

}  // namespace

void conv2d_winograd(const float* x, const Geom& g, const float* wm, const float* bias, float* out,
                     const int64_t* os, FilterOrigin origin, bool turned) {
  const WinogradKernels& k = winograd_kernels();
  const Form f = form_of(k, g, turned);
  const int64_t C = g.C, O = g.O;
  const int64_t T = g.N * image_tiles(g);
  const int64_t Opad = (O + kPanelRows - 1) / kPanelRows * kPanelRows;

  // The filters in the transform domain, U[xi] (O x C), stored as panels of 6 rows, column by
  // column: U[xi][o][c] at u[((xi * OP + o / 6) * C + c) * 6 + o % 6].
  const std::shared_ptr<const PackedFilters> filters = winograd_filters(f, wm, O, C, origin, turned);
  const float* u = filters->packed.data();

  // V[xi] (C x tiles) as panels of 16 columns, row by row: V[xi][c][col] at
  // v[xi * ldv + (col / 16 * C + c) * 16 + col % 16]. M[xi] (Opad x tiles) row-major, ld ldm, at
  // m + xi * ldmi. The transforms write (and read) all 16 matrices of a tile at once.
  //
  // Where the tiles make enough blocks small enough for one core's L2 (V and M within
  // kLocalFloats; at least four to each thread, since each block reads all of U), each thread
  // takes an even share of the tiles, in such blocks, and runs all three stages on them in its
  // own scratch: V and M never leave the core that wrote them, and there is no wait between the
  // stages. (Shared blocks hand half of V and M from one core's cache to the other's, twice: the
  // 64-channel convolutions of ResNet spent half their time in the transforms.) Otherwise (few
  // tiles, many channels) each block is large, within kBlockFloats, and every stage of it is
  // shared among the threads. Either way each output gets the same sums: the same bits.
  const int threads = num_threads();
  const BlockLayout local(tiles_per_block(kLocalFloats, f.xi, T, C, Opad), C, Opad);
  // Each thread's share of the tiles: whole panels, as even as panels allow.
  const int64_t panels = (T + kPanelCols - 1) / kPanelCols, share = (panels + threads - 1) / threads * kPanelCols;
  if (threads == 1 || share >= 4 * local.tb) {
    parallel_for(0, threads, 1, [&](int64_t h0, int64_t h1) {
      Scratch<float> v(f.xi * local.ldv), m(f.xi * pair_stride(local.ldm));  // m: products_and_outputs' scratch
      std::vector<TileRun> runs;
      for (int64_t h = h0; h < h1; ++h) {
        const int64_t end = std::min(T, (h + 1) * share);
        for (int64_t t0 = h * share; t0 < end; t0 += local.tb)
          winograd_block(k, f, x, g, u, bias, out, os, local, t0, std::min(end, t0 + local.tb), v.p, m.p,
                         /*split=*/false, runs);
      }
    });
    return;
  }
  const BlockLayout shared(tiles_per_block(kBlockFloats, f.xi, T, C, Opad), C, Opad);
  Scratch<float> v(f.xi * shared.ldv), m(f.xi * shared.ldmi);
  std::vector<TileRun> runs;
  for (int64_t t0 = 0; t0 < T; t0 += shared.tb)
    winograd_block(k, f, x, g, u, bias, out, os, shared, t0, std::min(T, t0 + shared.tb), v.p, m.p, /*split=*/true,
                   runs);
}

}  // namespace bm::cpu
