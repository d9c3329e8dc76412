// The weight gradient of float32 3x3 stride-1 convolutions by Winograd F(2x2, 3x3) on the CPU.
// The forward pass is y = A^T [U . V] A per 2x2 output tile, U = G g G^T the filter and V = B^T d B
// the 4x4 input tile (conv_winograd.cpp); so the gradient of g is
//   grad_g[o][c] = G^T (sum over tiles t of Y_t[o] . V_t[c]) G,   Y_t[o] = A e_t[o] A^T,
// e_t[o] grad_output's 2x2 tile. The sum is 16 matrix products (one per element xi of the 4x4
// transform domain), O x C each over the tiles: 16 multiplications per tile and channel pair
// where the direct sum takes 36 per 2x2 pixels (2.25 times fewer).
//
// Both operands are transformed with channels in the vector from channels-last copies of the input
// and of grad_output (conv_winograd_grad_kernels.h), block by block of tiles, and multiplied on the
// direct kernel (conv_direct_kernels.h): grad_output's transform is its "filters" (blocks of output
// channels, tile by tile), the input's its broadcasts (consecutive input channels of one tile).
//
// Determinism and rounding: the blocks of tiles depend only on the shapes; each element of the
// 16 products is the sum of its blocks' sums in block order, each block's sum one FMA chain over
// its tiles in order, so the bits do not depend on the thread count, and AVX2 and AVX-512 agree.
// They differ from the direct path's (the transforms add and scale), well inside the tolerances
// float32 gradients are held to (tests/test_conv_backward.py compares with torch).
#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "cpu/conv_common.h"
#include "cpu/conv_gemm.h"
#include "cpu/conv_winograd.h"

namespace bm::cpu {

using namespace conv_impl;

namespace {

constexpr int64_t kXi = 16;            // elements of a transformed 4x4 tile
constexpr int64_t kChannelStep = 16;   // the transforms' vector of channels (kGradLanes)
// Transformed inputs and grad_output of one block of tiles, at most (4 MiB); a block has 64 to
// 1024 tiles.
constexpr int64_t kGradBlockFloats = int64_t(1) << 20;

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

}  // namespace

bool winograd_weight_grad_applies(const Geom& g) {
  if (g.KH != 3 || g.KW != 3 || g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1 || g.G != 1) return false;
  // Fewer channels: the transforms outweigh the multiplications saved.
  return g.C >= 32 && g.O >= 32;
}

void conv2d_backward_weight_winograd(const float* x, const Geom& g, const float* go, const int64_t* gst, float* gw) {
  const WinogradKernels& k = winograd_kernels();
  const int64_t C = g.C, O = g.O, cb = k.direct_channels;
  const int64_t TY = (g.OH + 1) / 2, TX = (g.OW + 1) / 2, T = g.N * TY * TX;
  // Channel counts padded to whole vectors (Op: to 32, whole channel blocks on AVX2 and AVX-512).
  const int64_t Cp = round_up(C, kChannelStep), Op = round_up(O, 32), OB = Op / cb;

  // The input channels-last, zero-padded to whole tiles: xt[((n Hp + yy) Wp + xx) Cp + c] =
  // x[n][c][yy - ph][xx - pw] (zero outside the input and for c >= C).
  const int64_t Hp = 2 * TY + 2, Wp = 2 * TX + 2;
  Scratch<float> xt(g.N * Hp * Wp * Cp);
  int64_t lo, hi;  // columns [lo, hi) of xt come from the input
  valid_range(Wp, g.W, 1, g.pw, 0, &lo, &hi);
  parallel_for(0, g.N * Hp, std::max<int64_t>(1, 16384 / (Wp * Cp)), [&](int64_t r0, int64_t r1) {
    Scratch<float> tmp(channels_last_row_floats(hi - lo, 1, C));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / Hp, y = r % Hp - g.ph;
      const float* s = y >= 0 && y < g.H ? x + n * g.xs[0] + y * g.xs[2] + (lo - g.pw) * g.xs[3] : nullptr;
      channels_last_padded_row(s, g.xs[1], g.xs[3], 1, C, Cp, Wp, lo, hi, xt.p + r * Wp * Cp, tmp.p);
    }
  });
  // grad_output the same way, whole tiles: gt[((n 2TY + oy) 2TX + ox) Op + o] (zero past the
  // output's edges, where the last tiles hang over, and for o >= O).
  const int64_t Hg = 2 * TY, Wg = 2 * TX;
  Scratch<float> gt(g.N * Hg * Wg * Op);
  parallel_for(0, g.N * Hg, std::max<int64_t>(1, 16384 / (Wg * Op)), [&](int64_t r0, int64_t r1) {
    Scratch<float> tmp(channels_last_row_floats(g.OW, 1, O));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / Hg, oy = r % Hg;
      const float* s = oy < g.OH ? go + n * gst[0] + oy * gst[2] : nullptr;
      channels_last_padded_row(s, gst[1], gst[3], 1, O, Op, Wg, 0, g.OW, gt.p + r * Wg * Op, tmp.p);
    }
  });

  // Blocks of TB tiles (a size from the shapes alone). Per block: xh[xi][tile][c] (Cp floats a
  // tile) and yh[xi][o / cb][tile][o % cb]; off[tile] is where a tile's channels start in xh[xi].
  const int64_t TB = std::clamp<int64_t>(kGradBlockFloats / (kXi * (Cp + Op)), 64, 1024);
  const int64_t ldx = TB * Cp, ldy = TB * Op;
  Scratch<float> xh(kXi * ldx), yh(kXi * ldy);
  std::vector<int32_t> off(static_cast<size_t>(TB));
  for (int64_t t = 0; t < TB; ++t) off[size_t(t)] = int32_t(t * Cp);

  // Products: (xi, channel block ob, run of input channels jg), each the direct kernel's R x cb
  // block of U's gradient, its blocks' sums added in acc in block order.
  const std::vector<int64_t> jstart = direct_runs(C);
  const int64_t JG = int64_t(jstart.size()) - 1, R = k.direct_pixels_max, tasks = kXi * OB * JG;
  Scratch<float> acc(tasks * R * cb);
  std::vector<TileRun> runs;
  for (int64_t t0 = 0; t0 < T; t0 += TB) {
    const int64_t nb = std::min(T, t0 + TB) - t0;
    tile_runs(t0, t0 + nb, TY, TX, runs);
    parallel_for(0, int64_t(runs.size()), 1, [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        const TileRun& r = runs[size_t(q)];
        k.wgrad_input_tiles(xt.p + ((r.n * Hp + 2 * r.ty) * Wp + 2 * r.txa) * Cp, Wp * Cp, Cp, r.txb - r.txa,
                            xh.p + r.col * Cp, ldx);
        k.wgrad_grad_tiles(gt.p + ((r.n * Hg + 2 * r.ty) * Wg + 2 * r.txa) * Op, Wg * Op, Op, r.txb - r.txa,
                           yh.p + r.col * cb, ldy, TB * cb, cb);
      }
    });
    parallel_for(0, tasks, 1, [&](int64_t q0, int64_t q1) {
      float part[kDirectMaxBlock];
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t xi = q / (OB * JG), ob = q / JG % OB, jg = q % JG;
        const int64_t c0 = jstart[size_t(jg)], len = jstart[size_t(jg) + 1] - c0;
        float* a = acc.p + q * R * cb;
        k.direct_pixels(yh.p + xi * ldy + ob * TB * cb, xh.p + xi * ldx + c0, 1, 0, int(len), off.data(), nb, int(len),
                        t0 == 0 ? a : part);
        if (t0 > 0)
          for (int64_t i = 0; i < len * cb; ++i) a[i] += part[i];
      }
    });
  }

  // grad_g[o][c] = G^T W G, W[xi] = entry (c - c0), lane o % cb of task (xi, o / cb, group of c).
  std::vector<int64_t> group(static_cast<size_t>(C));  // c -> its run
  for (int64_t jg = 0; jg < JG; ++jg)
    for (int64_t c = jstart[size_t(jg)]; c < jstart[size_t(jg) + 1]; ++c) group[size_t(c)] = jg;
  parallel_for(0, O, std::max<int64_t>(1, 4096 / (C * 9)), [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      const int64_t ob = o / cb, j = o % cb;
      for (int64_t c = 0; c < C; ++c) {
        const int64_t jg = group[size_t(c)], i = c - jstart[size_t(jg)];
        float w[4][4];
        for (int64_t xi = 0; xi < kXi; ++xi) w[xi / 4][xi % 4] = acc.p[(((xi * OB + ob) * JG + jg) * R + i) * cb + j];
        float q[3][4];  // q = G^T w along the rows
        for (int s = 0; s < 4; ++s) {
          const float h = 0.5f * (w[1][s] + w[2][s]);
          q[0][s] = w[0][s] + h;
          q[1][s] = 0.5f * (w[1][s] - w[2][s]);
          q[2][s] = h + w[3][s];
        }
        float* dst = gw + (o * C + c) * 9;
        for (int a = 0; a < 3; ++a) {  // q G along the columns
          const float h = 0.5f * (q[a][1] + q[a][2]);
          dst[a * 3] = q[a][0] + h;
          dst[a * 3 + 1] = 0.5f * (q[a][1] - q[a][2]);
          dst[a * 3 + 2] = h + q[a][3];
        }
      }
    }
  });
}

}  // namespace bm::cpu
