// The weight gradient of float32 one-group convolutions on the direct kernel
// (conv_direct_kernels.h), with the output pixels as the depth of the sums:
//   grad_w[o][c][ky][kx] = sum over pixels d = (n, oy, ox) of grad[n][o][oy][ox] * x[n][c][iy][ix],
//   iy = oy sh - ph + ky dh, ix = ox sw - pw + kx.
// The kernel's vectors hold a block of output channels o (grad packed pixel by pixel: its "filters")
// and its broadcasts read R consecutive (kx, c) entries of one input row: with the input copied once
// channels-last and zero-padded, the kx and c of one pixel row are KW C consecutive floats, so the R
// broadcasts sit at fixed distances from one address per pixel. No column matrix is written (the
// panel path unfolded each input KH KW times and spent a third of its time doing it), and stride 2
// costs nothing extra. Needs kx unit-dilated (dw = 1).
//
// Determinism and rounding: each grad_w element is the sum of its pixel blocks' sums in block order,
// each block's sum one FMA chain over its pixels in order (so a float32 sum over a batch's 25000
// pixels rounds as about 1024 + 25 terms, not 25000), on the panel path's blocks
// (weight_grad_pixel_blocks): the same bits as that path, whatever the thread count and
// instruction set.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "cpu/conv_common.h"
#include "cpu/conv_gemm.h"
#include "cpu/conv_winograd.h"

namespace bm::cpu {

using namespace conv_impl;

namespace {

// With a 1-wide kernel only every sw-th column is read: the copy keeps only those (column step sw).
int64_t column_step(const Geom& g) { return g.KW == 1 ? g.sw : 1; }
int64_t padded_cols(const Geom& g) { return (g.OW - 1) * (g.sw / column_step(g)) + g.KW; }

}  // namespace

void channels_last_padded_row(const float* src, int64_t xcs, int64_t xws, int64_t cs, int64_t C, int64_t Cp,
                              int64_t Wp, int64_t lo, int64_t hi, float* d, float* tmp) {
  const int64_t n = hi - lo;
  if (!src || n <= 0) {
    std::fill(d, d + Wp * Cp, 0.0f);
    return;
  }
  std::fill(d, d + lo * Cp, 0.0f);
  std::fill(d + hi * Cp, d + Wp * Cp, 0.0f);
  d += lo * Cp;
  const WinogradKernels& k = winograd_kernels();
  if (xws != 1 && n > 1) {  // a view strided along W: 16 columns' pixels at a time in L1
    for (int64_t x0 = 0; x0 < n; x0 += 16)
      for (int64_t c = 0; c < Cp; ++c)
        for (int64_t xx = x0; xx < std::min(n, x0 + 16); ++xx)
          d[xx * Cp + c] = c < C ? src[c * xcs + xx * cs * xws] : 0.0f;
    return;
  }
  if (cs == 1 && Cp == C) {
    k.channels_last_rows(src, xcs, C, n, d);
    return;
  }
  // The whole run turned into tmp, then every cs-th pixel kept, its channels padded to Cp.
  k.channels_last_rows(src, xcs, C, (n - 1) * cs + 1, tmp);
  for (int64_t xx = 0; xx < n; ++xx) {
    std::copy(tmp + xx * cs * C, tmp + (xx * cs + 1) * C, d + xx * Cp);
    std::fill(d + xx * Cp + C, d + (xx + 1) * Cp, 0.0f);
  }
}

bool direct_weight_grad_applies(const Geom& g) {
  if (g.G != 1 || g.dw != 1 || g.C == 0 || !direct_fills_channel_blocks(g.O) || !direct_takes_filter(g)) return false;
  return g.N * direct_padded_rows(g) * padded_cols(g) * g.C < (int64_t(1) << 31);  // 32-bit pixel offsets
}

void conv2d_backward_weight_direct(const float* x, const Geom& g, const float* go, const int64_t* gst, float* gw) {
  const WinogradKernels& k = winograd_kernels();
  const int64_t O = g.O, C = g.C, cb = k.direct_channels, OB = (O + cb - 1) / cb;
  const int64_t Hp = direct_padded_rows(g), Wp = padded_cols(g), D = g.N * g.P;

  // The input channels-last with its padding: xt[((n Hp + yy) Wp + xx) C + c] =
  // x[n][c][yy - ph][xx cs - pw], cs the column step. Rows no tap reads (the odd ones of a 1x1
  // stride-2 conv) are not filled.
  const int64_t cs = column_step(g);
  std::vector<char> row_read(static_cast<size_t>(Hp), 0);
  for (int64_t oy = 0; oy < g.OH; ++oy)
    for (int64_t ky = 0; ky < g.KH; ++ky) row_read[size_t(oy * g.sh + ky * g.dh)] = 1;
  Scratch<float> xt(g.N * Hp * Wp * C);
  int64_t lo, hi;  // columns [lo, hi) of xt come from the input
  valid_range(Wp, g.W, cs, g.pw, 0, &lo, &hi);
  parallel_for(0, g.N * Hp, std::max<int64_t>(1, 16384 / (Wp * C)), [&](int64_t r0, int64_t r1) {
    Scratch<float> row(channels_last_row_floats(hi - lo, cs, C));
    for (int64_t r = r0; r < r1; ++r) {
      if (!row_read[size_t(r % Hp)]) continue;
      const int64_t n = r / Hp, y = r % Hp - g.ph;
      const float* s = y >= 0 && y < g.H ? x + n * g.xs[0] + y * g.xs[2] + (lo * cs - g.pw) * g.xs[3] : nullptr;
      channels_last_padded_row(s, g.xs[1], g.xs[3], cs, C, C, Wp, lo, hi, xt.p + r * Wp * C, row.p);
    }
  });
  // off[d]: where pixel d's (kx, c) run of tap row ky = 0 starts in xt.
  std::vector<int32_t> off(static_cast<size_t>(D));
  for (int64_t d = 0; d < D; ++d) {
    const int64_t n = d / g.P, oy = d % g.P / g.OW, ox = d % g.OW;
    off[size_t(d)] = int32_t(((n * Hp + oy * g.sh) * Wp + ox * (g.sw / cs)) * C);
  }

  // Tiles: (channel block ob, tap row ky, group of R (kx, c) entries); each adds its pixel blocks'
  // sums into acc.
  const int64_t J = g.KW * C, R = k.direct_pixels_max;
  const std::vector<int64_t> jstart = direct_runs(J);
  const int64_t JG = int64_t(jstart.size()) - 1;
  const int64_t tiles = OB * g.KH * JG, tile_floats = R * cb;
  Scratch<float> acc(tiles * tile_floats);
  // Pixel blocks of about 1024 (a channel block's packed grad, 128 KiB, stays in L2), each a run
  // of the flattened pixels d = n P + p.
  const std::vector<Block> blocks = weight_grad_pixel_blocks(g);
  const int64_t nblocks = int64_t(blocks.size());
  int64_t depth_max = 0;
  for (const Block& b : blocks) depth_max = std::max(depth_max, b.cols());
  const int64_t gp_floats = OB * depth_max * cb;
  // Block blk's grad packed into gp[(ob * depth + i) * cb + j], units q in [q0, q1) of 64 pixels of
  // one channel block each: those 8 KiB stay in L1 while each of the block's channels writes its
  // column (a partial block, or a grad_output strided along W).
  auto chunks_of = [](const Block& blk) { return (blk.cols() + 63) / 64; };
  auto pack = [&](const Block& blk, float* gp, int64_t q0, int64_t q1) {
    const int64_t d0 = blk.n0 * g.P + blk.p0, dn = blk.cols(), chunks = chunks_of(blk);
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t ob = q / chunks, i0 = q % chunks * 64, i1 = std::min(dn, i0 + 64);
      if ((ob + 1) * cb <= O && gst[3] == 1) {  // a whole channel block: turned 8 x 8 at a time
        for (int64_t d = d0 + i0, i = i0; i < i1;) {  // one output row's run at a time
          const int64_t n = d / g.P, p = d % g.P, oy = p / g.OW, ox0 = p % g.OW;
          const int64_t len = std::min(g.OW - ox0, i1 - i);
          k.channels_last_rows(go + n * gst[0] + ob * cb * gst[1] + oy * gst[2] + ox0, gst[1], cb, len,
                               gp + (ob * dn + i) * cb);
          i += len, d += len;
        }
        continue;
      }
      for (int64_t j = 0; j < cb; ++j) {
        const int64_t o = ob * cb + j;
        float* dst = gp + ob * dn * cb + j;
        if (o >= O) {
          for (int64_t i = i0; i < i1; ++i) dst[i * cb] = 0.0f;
          continue;
        }
        for (int64_t d = d0 + i0, i = i0; i < i1;) {  // one output row's run at a time
          const int64_t n = d / g.P, p = d % g.P, oy = p / g.OW, ox0 = p % g.OW;
          const int64_t len = std::min(g.OW - ox0, i1 - i);
          const float* src = go + n * gst[0] + o * gst[1] + oy * gst[2] + ox0 * gst[3];
          for (int64_t e = 0; e < len; ++e, ++i) dst[i * cb] = src[e * gst[3]];
          d += len;
        }
      }
    }
  };
  // Tile t's sums over block blk's pixels into a (len cb floats).
  auto tile = [&](const Block& blk, const float* gp, int64_t t, float* a) {
    const int64_t ob = t / (g.KH * JG), ky = t / JG % g.KH, jg = t % JG;
    const int64_t j0 = jstart[size_t(jg)], d0 = blk.n0 * g.P + blk.p0, dn = blk.cols();
    const int len = int(jstart[size_t(jg) + 1] - j0);
    k.direct_pixels(gp + ob * dn * cb, xt.p + ky * g.dh * Wp * C + j0, 1, 0, len, off.data() + d0, dn, len, a);
  };
  // Tile t's sums over a later block (in part) added into acc.
  auto add_tile = [&](int64_t t, const float* part) {
    const int64_t jg = t % JG, n = (jstart[size_t(jg) + 1] - jstart[size_t(jg)]) * cb;
    float* a = acc.p + t * tile_floats;
    for (int64_t i = 0; i < n; ++i) a[i] += part[i];
  };
  const int64_t T = std::min<int64_t>(num_threads(), nblocks);
  const int64_t per_thread = gp_floats + tiles * tile_floats;  // a thread's own buffers
  if (T > 1 && nblocks >= 2 * T && T * per_thread <= (int64_t(8) << 20)) {
    // Many blocks (a large image: the stem's 104 at batch 8): each thread takes whole blocks,
    // packs their grad into its own buffer and runs all their tiles, one block after another, with
    // no barrier between blocks: one thread's packing (reads of grad from memory) runs while the
    // other computes, and the packed grad stays in the cache of the core that reads it. Block b's
    // sums are added into acc once blocks 0 .. b - 1 are in (an ordered hand-over: the same sums
    // in the same order as one thread). A block is claimed only by a thread that runs it, so the
    // lowest block not yet added always belongs to a running thread that is not waiting: no
    // deadlock, whichever threads the pool gives us. Nothing in the loop throws (no allocation).
    // (Up to 32 MiB of buffers, else the shared path.)
    Scratch<float> gps(T * gp_floats), parts(T * tiles * tile_floats);
    std::atomic<int64_t> next{0}, added{0};
    parallel_for(0, T, 1, [&](int64_t c0, int64_t) {
      float* gp = gps.p + c0 * gp_floats;
      float* part = parts.p + c0 * tiles * tile_floats;
      for (int64_t b; (b = next.fetch_add(1)) < nblocks;) {
        const Block& blk = blocks[size_t(b)];
        pack(blk, gp, 0, OB * chunks_of(blk));
        float* dst = b == 0 ? acc.p : part;  // block 0's sums go straight into acc
        for (int64_t t = 0; t < tiles; ++t) tile(blk, gp, t, dst + t * tile_floats);
        if (b > 0) {
          wait_until([&] { return added.load(std::memory_order_acquire) == b; });
          for (int64_t t = 0; t < tiles; ++t) add_tile(t, part + t * tile_floats);
        }
        added.store(b + 1, std::memory_order_release);
      }
    });
  } else {
    // Few blocks: the threads share each block's packing, then its tiles.
    Scratch<float> gp(gp_floats);
    for (int64_t b = 0; b < nblocks; ++b) {
      const Block& blk = blocks[size_t(b)];
      parallel_for(0, OB * chunks_of(blk), std::max<int64_t>(1, 16 / cb),
                   [&](int64_t q0, int64_t q1) { pack(blk, gp.p, q0, q1); });
      parallel_for(0, tiles, 1, [&](int64_t t0, int64_t t1) {
        float part[kDirectMaxBlock];
        for (int64_t t = t0; t < t1; ++t) {
          tile(blk, gp.p, t, b == 0 ? acc.p + t * tile_floats : part);  // block 0's sums straight into acc
          if (b > 0) add_tile(t, part);
        }
      });
    }
  }
  // grad_w[o][c][ky][kx] is entry i, lane o % cb of tile (o / cb, ky, jg), (kx, c) = jstart[jg] + i.
  // One task per 16 output channels (one cache line of each entry), c by c: the KH KW entries of
  // one c are KH KW whole lines, gathered into `turn` and turned in registers (direct_store_row)
  // into 16 runs of KH KW floats, one in each output channel's row: a masked store per run. (Output
  // channel by output channel, each read took a line for one float: 1.6 ms of a 4.9 ms 256->512
  // gradient. A scalar store per float, 16 rows at a time, after that: 2-3% slower on that
  // gradient, batch 8, Zen 4, min of 6 alternated runs 4.98-5.09 ms against 4.85-4.92.)
  if (g.KH * g.KW == 1) {
    // 1x1: each tile is an R x cb block of grad_w^T (rows c, lanes o), turned in registers and
    // stored as cb runs of up to R input channels by one direct_store_row. (The pass below, c by c,
    // copied each c's line and stored one float into each of 16 rows: a fifth of a 256 -> 512
    // stride-2 gradient, batch 8.)
    parallel_for(0, tiles, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t ob = t / JG, jg = t % JG, c0 = jstart[size_t(jg)];
        k.direct_store_row(acc.p + t * tile_floats, int(jstart[size_t(jg) + 1] - c0), std::min(cb, O - ob * cb), cb,
                           nullptr, gw + ob * cb * C + c0, C);
      }
    });
    return;
  }
  std::vector<int64_t> group(static_cast<size_t>(J));  // (kx, c) -> its group
  for (int64_t jg = 0; jg < JG; ++jg)
    for (int64_t e = jstart[size_t(jg)]; e < jstart[size_t(jg) + 1]; ++e) group[size_t(e)] = jg;
  const int64_t KHW = g.KH * g.KW;
  constexpr int64_t kLine = 16;  // floats of a cache line; cb is a multiple
  parallel_for(0, (O + kLine - 1) / kLine, 1, [&](int64_t h0, int64_t h1) {
    float turn[kDirectMaxBlock] = {};  // KHW rows of kLine lanes
    for (int64_t h = h0; h < h1; ++h) {
      const int64_t o0 = h * kLine, ob = o0 / cb, j0 = o0 % cb, lanes = std::min(kLine, O - o0);
      for (int64_t c = 0; c < C; ++c) {
        float* dst = gw + o0 * C * KHW + c * KHW;
        auto entry = [&](int64_t ky, int64_t kx) {
          const int64_t e = kx * C + c, jg = group[size_t(e)], t = (ob * g.KH + ky) * JG + jg;
          return acc.p + (t * R + e - jstart[size_t(jg)]) * cb + j0;
        };
        if (KHW <= kDirectMaxBlock / kLine) {  // the turn's reads (whole blocks of 16 or 8 rows) stay in it
          for (int64_t ky = 0; ky < g.KH; ++ky)
            for (int64_t kx = 0; kx < g.KW; ++kx)
              std::memcpy(turn + (ky * g.KW + kx) * kLine, entry(ky, kx), kLine * sizeof(float));  // inlined
          k.direct_store_row(turn, int(KHW), lanes, kLine, nullptr, dst, C * KHW);
          continue;
        }
        for (int64_t ky = 0; ky < g.KH; ++ky)
          for (int64_t kx = 0; kx < g.KW; ++kx) {
            const float* src = entry(ky, kx);
            for (int64_t l = 0; l < lanes; ++l) dst[l * C * KHW + ky * g.KW + kx] = src[l];
          }
      }
    }
  });
}

}  // namespace bm::cpu

namespace bm::cpu {

namespace {

constexpr int kInputGradFilters = 5;  // conv_pack_cache.h: this file's kind of entry

// The input gradient as sh x sw independent convolutions over grad_output, one per stride phase
// (ry, rx): input pixel (iy, ix) with (iy + ph) % sh == ry and (ix + pw) % sw == rx receives exactly
// the taps ky with ky dh % sh == ry (and kx alike), from grad_output row oy = q - a(ky), q =
// (iy + ph - ry) / sh, a(ky) = (ky dh - ry) / sh. Each phase is a stride-1 convolution of a
// zero-padded copy of grad_output (rows shifted down by Ay = max a, columns by Ax) with the taps
// of its phase: no column matrix, no scatter-add (col2im), and stride 2 does a quarter of the
// pixels with a quarter of the taps each.
struct InputGradPhases {
  int64_t Ay, Ax, Hg, Wg;  // grad_output's zero-padded copy: Hg x Wg planes, row oy at oy + Ay
  std::vector<std::vector<int64_t>> ky, kx;  // the taps of each row phase ry and column phase rx

  explicit InputGradPhases(const Geom& g)
      : Ay((g.KH - 1) * g.dh / g.sh), Ax((g.KW - 1) * g.dw / g.sw),
        Hg(std::max(g.OH, (g.H - 1 + g.ph) / g.sh + 1) + Ay), Wg(std::max(g.OW, (g.W - 1 + g.pw) / g.sw + 1) + Ax),
        ky(size_t(g.sh)), kx(size_t(g.sw)) {
    for (int64_t t = 0; t < g.KH; ++t) ky[size_t(t * g.dh % g.sh)].push_back(t);
    for (int64_t t = 0; t < g.KW; ++t) kx[size_t(t * g.dw % g.sw)].push_back(t);
  }
  int64_t taps(int64_t ry, int64_t rx) const { return int64_t(ky[size_t(ry)].size() * kx[size_t(rx)].size()); }
};

// q in [*lo, *hi): the rows (or columns) i = q s + r - p of phase r inside [0, n).
void phase_range(int64_t n, int64_t s, int64_t r, int64_t p, int64_t* lo, int64_t* hi) {
  const int64_t a = p - r;  // i >= 0  <=>  q s >= a
  *lo = a <= 0 ? 0 : (a + s - 1) / s;
  const int64_t b = n - 1 + p - r;  // i <= n - 1  <=>  q s <= b
  *hi = b < 0 ? 0 : b / s + 1;
  if (*hi < *lo) *hi = *lo;
}

}  // namespace

bool direct_input_grad_applies(const Geom& g) {
  // Input channels in the kernel's vectors.
  if (g.G != 1 || g.O == 0 || !direct_fills_channel_blocks(g.C)) return false;
  const InputGradPhases ph(g);
  return g.O * ph.Hg * ph.Wg < (int64_t(1) << 31);  // 32-bit tap offsets within an image
}

void conv2d_backward_input_direct(const float* wm, const Geom& g, const float* go, const int64_t* gst, float* gx,
                                  const int64_t* xs, FilterOrigin origin) {
  const WinogradKernels& k = winograd_kernels();
  const int64_t O = g.O, C = g.C, cb = k.direct_channels, CB = (C + cb - 1) / cb, KHW = g.KH * g.KW;
  const InputGradPhases ph(g);
  const int64_t S = g.sh * g.sw;
  // Phase p = (ry, rx)'s filters, cb input channels per block, (o, tap) by (o, tap), taps ky-major:
  // w[o][c][ky][kx] at at[p] + ((c / cb) O taps + o taps + t) cb + c % cb.
  std::vector<int64_t> at(size_t(S + 1), 0);
  for (int64_t p = 0; p < S; ++p) at[size_t(p + 1)] = at[size_t(p)] + CB * cb * O * ph.taps(p / g.sw, p % g.sw);
  const std::shared_ptr<const PackedFilters> filters =
      packed_filters(kInputGradFilters, wm, O, C * KHW, size_t(at[size_t(S)]), [&](float* a) {
        parallel_for(0, S * O, 1, [&](int64_t q0, int64_t q1) {
          for (int64_t q = q0; q < q1; ++q) {
            const int64_t p = q / O, o = q % O, ry = p / g.sw, rx = p % g.sw, T = ph.taps(ry, rx);
            int64_t t = 0;
            for (int64_t ky : ph.ky[size_t(ry)])
              for (int64_t kx : ph.kx[size_t(rx)]) {
                for (int64_t c = 0; c < C; ++c)
                  a[at[size_t(p)] + (((c / cb) * O + o) * T + t) * cb + c % cb] =
                      wm[(o * C + c) * KHW + ky * g.KW + kx];
                ++t;
              }
          }
        });
      }, origin);
  const float* w = filters->packed.data();

  // grad_output zero-padded: gp[((n O + o) Hg + oy + Ay) Wg + ox + Ax] = go[n][o][oy][ox].
  const int64_t plane = ph.Hg * ph.Wg;
  Scratch<float> gp(g.N * O * plane);
  parallel_for(0, g.N * O * ph.Hg, std::max<int64_t>(1, 4096 / ph.Wg), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / (O * ph.Hg), o = r / ph.Hg % O, oy = r % ph.Hg - ph.Ay;
      float* d = gp.p + r * ph.Wg;
      std::fill(d, d + ph.Wg, 0.0f);
      if (oy < 0 || oy >= g.OH) continue;
      const float* s = go + n * gst[0] + o * gst[1] + oy * gst[2];
      for (int64_t ox = 0; ox < g.OW; ++ox) d[ox + ph.Ax] = s[ox * gst[3]];
    }
  });

  // One task: one group of rows q of one phase of one image against one block of input channels.
  struct Phase {
    int64_t ry, rx, qy0, qy1, qx0, qx1;
    DirectRows rows;  // the kernel calls of a group of phase rows, from (qy0, qx0)
    std::vector<int32_t> off;  // (o, tap): where it reads from the pixel's own position
  };
  // Phases no tap reaches (three of four in a 1x1 stride-2 conv) hold zeros: written by one pass
  // over the whole gradient, when it is contiguous, instead of a strided store per element.
  bool zero_phase = false;
  for (int64_t p = 0; p < S; ++p) zero_phase |= ph.taps(p / g.sw, p % g.sw) == 0;
  const bool cleared = zero_phase && xs[3] == 1 && xs[2] == g.W && xs[1] == g.H * g.W && xs[0] == C * g.H * g.W;
  if (cleared)
    parallel_for(0, g.N * C * g.H * g.W, kGrain, [&](int64_t b, int64_t e) { std::fill(gx + b, gx + e, 0.0f); });
  std::vector<Phase> phases;
  std::vector<char> skip;
  int64_t groups_max = 0;
  for (int64_t p = 0; p < S; ++p) {
    Phase f{p / g.sw, p % g.sw, 0, 0, 0, 0, {}, {}};
    phase_range(g.H, g.sh, f.ry, g.ph, &f.qy0, &f.qy1);
    phase_range(g.W, g.sw, f.rx, g.pw, &f.qx0, &f.qx1);
    f.rows = direct_rows(f.qx1 - f.qx0, f.qy1 - f.qy0);
    for (int64_t o = 0; o < O; ++o)
      for (int64_t ky : ph.ky[size_t(f.ry)])
        for (int64_t kx : ph.kx[size_t(f.rx)])
          f.off.push_back(int32_t(o * plane + (ph.Ay - (ky * g.dh - f.ry) / g.sh) * ph.Wg + ph.Ax -
                                  (kx * g.dw - f.rx) / g.sw));
    skip.push_back(cleared && ph.taps(f.ry, f.rx) == 0);
    groups_max = std::max(groups_max, f.rows.groups);
    phases.push_back(std::move(f));
  }
  // Tasks (n, cbk, group, phase), the phases innermost: the phases of one group of rows write
  // interleaved pixels of the same gradient rows, one after another on one thread, while those
  // rows are in its cache (phase by phase, each row came back from memory sh sw times).
  parallel_for(0, g.N * CB * groups_max * S, 1, [&](int64_t t0, int64_t t1) {
    float acc[kDirectMaxBlock];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t p = t % S, gi = t / S % groups_max, cbk = t / (S * groups_max) % CB, n = t / (S * groups_max * CB);
      const Phase& f = phases[size_t(p)];
      if (skip[size_t(p)] || gi >= f.rows.groups) continue;
      const int64_t q0 = f.qy0 + gi * f.rows.group;
      const int64_t channels = std::min(cb, C - cbk * cb);
      const int64_t K = int64_t(f.off.size());  // (o, tap) pairs
      const float* wp = w + at[size_t(p)] + cbk * K * cb;
      // `width` outputs in a to phase pixels from (q, qx): every sw-th column of a gradient row.
      auto store = [&](const float* a, int64_t q, int64_t qx, int64_t width) {
        float* d = gx + n * xs[0] + cbk * cb * xs[1] + (q * g.sh + f.ry - g.ph) * xs[2] + (qx * g.sw + f.rx - g.pw) * xs[3];
        for (int64_t j = 0; j < channels; ++j)
          for (int64_t i = 0; i < width; ++i) d[j * xs[1] + i * g.sw * xs[3]] = a[i * cb + j];
      };
      const bool last = gi == f.rows.groups - 1 && !f.rows.last.empty();
      for (const DirectRun& r : last ? f.rows.last : f.rows.full) {
        const int64_t q = q0 + r.row, qx = f.qx0 + r.x0;
        if (K > 0)
          k.direct_pixels(wp, gp.p + n * O * plane + q * ph.Wg + qx, 1, ph.Wg - r.x0, r.split, f.off.data(), K, r.R, acc);
        else std::fill(acc, acc + r.R * cb, 0.0f);  // a phase no tap reaches (stride > kernel): zeros
        store(acc, q, qx, r.split);
        if (r.split < r.R) store(acc + r.split * cb, q + 1, f.qx0, r.R - r.split);
      }
    }
  });
}

}  // namespace bm::cpu
