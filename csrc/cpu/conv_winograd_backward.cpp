// The weight gradient of float32 3x3 convolutions by Winograd on the CPU: F(2x2, 3x3) at stride 1,
// and at stride 2 the forward's 25-element form (conv_winograd_s2_kernels.h). The forward pass is
// y = A^T [U . V] A per 2x2 output tile, U = G g G^T the filter and V = B^T d B the input tile
// (4x4 at stride 1, 5x5 at stride 2; conv_winograd.cpp); so the gradient of g is
//   grad_g[o][c] = G^T (sum over tiles t of Y_t[o] . V_t[c]) G,   Y_t[o] = A e_t[o] A^T,
// e_t[o] grad_output's 2x2 tile. The sum is 16 (25) matrix products, one per element xi of the
// transform domain, O x C each over the tiles: 16 (25) multiplications per tile and channel pair
// where the direct sum takes 36 per 2x2 pixels.
//
// Both operands are transformed with channels in the vector from channels-last copies of the input
// and of grad_output (conv_winograd_grad_kernels.h), block by block of tiles, and multiplied on the
// direct kernel (conv_direct_kernels.h): grad_output's transform is its "filters" (blocks of output
// channels, tile by tile), the input's its broadcasts (consecutive input channels of one tile).
//
// Determinism and rounding: the blocks of tiles depend only on the shapes; each element of the
// products is the sum of its blocks' sums in block order, each block's sum one FMA chain over
// its tiles in order, so the bits do not depend on the thread count, and AVX2 and AVX-512 agree.
// They differ from the direct path's (the transforms add and scale), well inside the tolerances
// float32 gradients are held to (tests/test_conv_backward.py compares with torch).
#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "cpu/conv_common.h"
#include "cpu/conv_gemm.h"
#include "cpu/conv_winograd.h"
#include "cpu/isa.h"

namespace bm::cpu {

using namespace conv_impl;

namespace {

constexpr int64_t kChannelStep = 16;   // the transforms' vector of channels (kGradLanes)
// Transformed inputs and grad_output of one block of tiles, at most (4 MiB); a block has 64 to
// 1024 tiles.
constexpr int64_t kGradBlockFloats = int64_t(1) << 20;

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }


// Floats of transformed input and grad_output a tile takes in a block: 16 (25) elements of Cp
// input channels and 16 (9 distinct: wgrad_grad_tiles_s2) of Op output channels.
int64_t tile_floats(const Geom& g) {
  const int64_t Cp = round_up(g.C, kChannelStep), Op = round_up(g.O, 32);
  return g.sh == 2 ? 25 * Cp + 9 * Op : 16 * (Cp + Op);
}

}  // namespace

bool winograd_weight_grad_applies(const Geom& g) {
  if (g.KH != 3 || g.KW != 3 || g.sh != g.sw || g.sh > 2 || g.dh != 1 || g.dw != 1 || g.G != 1) return false;
  // Fewer channels: the transforms outweigh the multiplications saved.
  if (g.sh == 1) return g.C >= 32 && g.O >= 32;
  // Stride 2 saves less (25 products a tile for 36), and, with blocks of fewer than 128 tiles,
  // adding each block's sums into the total costs more than it saves. Measured on Zen 4 (2
  // threads): 1.04-1.31x the direct kernel where every condition holds (64 -> 128 and 128 -> 256
  // channels, outputs 14 to 56 wide, batch 1 and 8); 0.54-0.99x where one fails (256 -> 512
  // channels, 128 -> 256 at batch 1 on 14-wide outputs, 7-wide outputs). On an Intel Xeon with
  // two 512-bit FMA units (cpu/isa.h) the same shapes read 0.90-1.08x: there the direct kernel.
  return cpu_zen3_or_zen4() && stride2_shape_pays(g) && kGradBlockFloats / tile_floats(g) >= 128;
}

namespace {

constexpr int kLanes = 16;  // output channels side by side in the last pass (direct_channels is a multiple)

// grad_g = G^T W G for kLanes output channels side by side: w[u][v][l] is element (u, v) of lane
// l's W (kw = 4 or 5 elements per axis), r[l] gets its 3x3 gradient. Stride 1: Lavin and Gray's G
// (rows g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2). Stride 2: G g = (g0, g0 + g2, g2, g1, g1),
// so G^T w = (w0 + w1, w3 + w4, w1 + w2). The loops run over the lanes innermost: vector arithmetic.
template <int kw>
void filter_gradient(const float (*w)[kw][kLanes], float (*r)[9]) {
  float q[3][kw][kLanes];  // q = G^T w along the rows
  for (int s = 0; s < kw; ++s)
    for (int l = 0; l < kLanes; ++l) {
      if constexpr (kw == 4) {
        const float h = 0.5f * (w[1][s][l] + w[2][s][l]);
        q[0][s][l] = w[0][s][l] + h;
        q[1][s][l] = 0.5f * (w[1][s][l] - w[2][s][l]);
        q[2][s][l] = h + w[3][s][l];
      } else {
        q[0][s][l] = w[0][s][l] + w[1][s][l];
        q[1][s][l] = w[3][s][l] + w[4][s][l];
        q[2][s][l] = w[1][s][l] + w[2][s][l];
      }
    }
  for (int e = 0; e < 3; ++e)  // q G along the columns, output channel by output channel
    for (int l = 0; l < kLanes; ++l) {
      if constexpr (kw == 4) {
        const float h = 0.5f * (q[e][1][l] + q[e][2][l]);
        r[l][e * 3] = q[e][0][l] + h;
        r[l][e * 3 + 1] = 0.5f * (q[e][1][l] - q[e][2][l]);
        r[l][e * 3 + 2] = h + q[e][3][l];
      } else {
        r[l][e * 3] = q[e][0][l] + q[e][1][l];
        r[l][e * 3 + 1] = q[e][3][l] + q[e][4][l];
        r[l][e * 3 + 2] = q[e][1][l] + q[e][2][l];
      }
    }
}

// The 3x3 gradients of one run of input channels c0 + i (i < len) for kLanes output channels from
// j0 on (lanes of them real), from acc (a: entry (xi, i, j) at a[(xi R + i) cb + j]).
template <int kw>
void filter_gradients(const float* a, int64_t R, int64_t cb, int64_t len, int64_t j0, int64_t lanes, int64_t C,
                      int64_t c0, float* gw) {
  for (int64_t i = 0; i < len; ++i) {
    float w[kw][kw][kLanes];
    for (int xi = 0; xi < kw * kw; ++xi)
      for (int l = 0; l < kLanes; ++l) w[xi / kw][xi % kw][l] = a[(xi * R + i) * cb + j0 + l];
    float r[kLanes][9];
    filter_gradient<kw>(w, r);
    for (int64_t l = 0; l < lanes; ++l) std::copy(r[l], r[l] + 9, gw + ((j0 + l) * C + c0 + i) * 9);
  }
}

}  // namespace

void conv2d_backward_weight_winograd(const float* x, const Geom& g, const float* go, const int64_t* gst, float* gw) {
  const WinogradKernels& k = winograd_kernels();
  const int64_t C = g.C, O = g.O, cb = k.direct_channels;
  // Stride 1: 4x4 input tiles 2 pixels apart, 16 elements; stride 2: 5x5 tiles 4 apart, 25.
  const bool s2 = g.sh == 2;
  const int64_t xis = s2 ? 25 : 16, step = s2 ? 4 : 2;
  const auto input_tiles = s2 ? k.wgrad_input_tiles_s2 : k.wgrad_input_tiles;
  const auto grad_tiles = s2 ? k.wgrad_grad_tiles_s2 : k.wgrad_grad_tiles;
  const int64_t TY = (g.OH + 1) / 2, TX = (g.OW + 1) / 2, T = g.N * TY * TX;
  // Channel counts padded to whole vectors (Op: to 32, whole channel blocks on AVX2 and AVX-512).
  const int64_t Cp = round_up(C, kChannelStep), Op = round_up(O, 32), OB = Op / cb;

  // The input channels-last, zero-padded to whole tiles: xt[((n Hp + yy) Wp + xx) Cp + c] =
  // x[n][c][yy - ph][xx - pw] (zero outside the input and for c >= C).
  const int64_t Hp = step * TY + 5 - step, Wp = step * TX + 5 - step;
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
  const int64_t TB = std::clamp<int64_t>(kGradBlockFloats / tile_floats(g), 64, 1024);
  const int64_t ldx = TB * Cp, ldy = TB * Op;
  Scratch<float> xh(xis * ldx), yh((s2 ? 9 : xis) * ldy);  // (9: wgrad_grad_tiles_s2)
  std::vector<int32_t> off(static_cast<size_t>(TB));
  for (int64_t t = 0; t < TB; ++t) off[size_t(t)] = int32_t(t * Cp);

  // Products: (xi, channel block ob, run of input channels jg), each the direct kernel's R x cb
  // block of U's gradient, its blocks' sums added in acc in block order: acc[((q xis + xi) R + i)
  // cb + j], q = ob JG + jg, is entry (c0 + i, ob cb + j) of xi (the xis xi of one q together).
  const std::vector<int64_t> jstart = direct_runs(C);
  const int64_t JG = int64_t(jstart.size()) - 1, R = k.direct_pixels_max, tasks = OB * JG;
  Scratch<float> acc(tasks * xis * R * cb);
  std::vector<TileRun> runs;
  for (int64_t t0 = 0; t0 < T; t0 += TB) {
    const int64_t nb = std::min(T, t0 + TB) - t0;
    tile_runs(t0, t0 + nb, TY, TX, runs);
    parallel_for(0, int64_t(runs.size()), 1, [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        const TileRun& r = runs[size_t(q)];
        input_tiles(xt.p + ((r.n * Hp + step * r.ty) * Wp + step * r.txa) * Cp, Wp * Cp, Cp, r.txb - r.txa,
                    xh.p + r.col * Cp, ldx);
        grad_tiles(gt.p + ((r.n * Hg + 2 * r.ty) * Wg + 2 * r.txa) * Op, Wg * Op, Op, r.txb - r.txa,
                           yh.p + r.col * cb, ldy, TB * cb, cb);
      }
    });
    // (xi, ob, jg) with jg innermost: consecutive tasks read the same xi's grad block, in L1.
    // (Tasks (ob, jg) doing all 16 xi, so that one task's 16 W were in its cache for the
    // transform, were 1.3x slower: each call read a grad block from L2.)
    parallel_for(0, xis * tasks, 1, [&](int64_t q0, int64_t q1) {
      float part[kDirectMaxBlock];
      for (int64_t qx = q0; qx < q1; ++qx) {
        const int64_t xi = qx / tasks, q = qx % tasks, ob = q / JG, jg = q % JG;
        const int64_t c0 = jstart[size_t(jg)], len = jstart[size_t(jg) + 1] - c0;
        float* a = acc.p + (q * xis + xi) * R * cb;
        const int64_t yi = s2 ? 3 * kWgradSlotS2[xi / 5] + kWgradSlotS2[xi % 5] : xi;
        k.direct_pixels(yh.p + yi * ldy + ob * TB * cb, xh.p + xi * ldx + c0, 1, 0, int(len), off.data(), nb, int(len),
                        t0 == 0 ? a : part);
        if (t0 > 0)
          for (int64_t i = 0; i < len * cb; ++i) a[i] += part[i];
      }
    });
  }
  // grad_g[o][c] = G^T W G for the entries of q, 16 output channels side by side, from its 16 (25) W
  // stored together: (o, c) by (o, c), each of the 16 reads took a line for one float (3.6 of a 12
  // ms 512 -> 512 gradient on a 512 KiB L2). (Fused into the products' tasks, on runs of jg after
  // the last block, it was 1.05-1.15x slower.)
  parallel_for(0, tasks, 1, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t ob = q / JG, jg = q % JG, c0 = jstart[size_t(jg)], len = jstart[size_t(jg) + 1] - c0;
      const float* a = acc.p + q * xis * R * cb;
      for (int64_t j0 = 0; j0 < cb && ob * cb + j0 < O; j0 += kLanes) {
        const int64_t lanes = std::min<int64_t>(kLanes, O - ob * cb - j0);
        if (s2) filter_gradients<5>(a, R, cb, len, j0, lanes, C, c0, gw + ob * cb * C * 9);
        else filter_gradients<4>(a, R, cb, len, j0, lanes, C, c0, gw + ob * cb * C * 9);
      }
    }
  });
}

}  // namespace bm::cpu
