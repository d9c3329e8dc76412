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
#include <vector>

#include "core/parallel.h"
#include "cpu/conv_common.h"
#include "cpu/conv_gemm.h"
#include "cpu/conv_winograd.h"

namespace bm::cpu {

using namespace conv_impl;

namespace {

constexpr int kMaxTile = 512;          // floats of one kernel call's sums (14 x 32 on AVX-512)

int64_t padded_rows(const Geom& g) { return (g.OH - 1) * g.sh + (g.KH - 1) * g.dh + 1; }
int64_t padded_cols(const Geom& g) { return (g.OW - 1) * g.sw + g.KW; }

// [0, total) in `parts` runs of sizes as equal as possible: run i starts at starts[i].
std::vector<int64_t> even_runs(int64_t total, int64_t parts) {
  std::vector<int64_t> starts(size_t(parts + 1));
  for (int64_t i = 0; i <= parts; ++i) starts[size_t(i)] = total * i / parts;
  return starts;
}

}  // namespace

bool direct_weight_grad_applies(const Geom& g) {
  if (g.G != 1 || g.dw != 1) return false;
  const int64_t cb = winograd_kernels().direct_channels, blocks = (g.O + cb - 1) / cb;
  if (4 * g.O < 3 * blocks * cb) return false;  // as direct_applies: mostly real channels per block
  return g.N * padded_rows(g) * padded_cols(g) * g.C < (int64_t(1) << 31);  // 32-bit pixel offsets
}

void conv2d_backward_weight_direct(const float* x, const Geom& g, const float* go, const int64_t* gst, float* gw) {
  const WinogradKernels& k = winograd_kernels();
  const int64_t O = g.O, C = g.C, cb = k.direct_channels, OB = (O + cb - 1) / cb;
  const int64_t Hp = padded_rows(g), Wp = padded_cols(g), D = g.N * g.P;

  // The input channels-last with its padding: xt[((n Hp + yy) Wp + xx) C + c] = x[n][c][yy - ph][xx - pw].
  Scratch<float> xt(g.N * Hp * Wp * C);
  int64_t lo, hi;  // padded columns [lo, hi) come from the input
  valid_range(Wp, g.W, 1, g.pw, 0, &lo, &hi);
  parallel_for(0, g.N * Hp, std::max<int64_t>(1, 16384 / (Wp * C)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / Hp, y = r % Hp - g.ph;
      float* d = xt.p + r * Wp * C;
      if (y < 0 || y >= g.H || lo >= hi) {
        std::fill(d, d + Wp * C, 0.0f);
        continue;
      }
      std::fill(d, d + lo * C, 0.0f);
      std::fill(d + hi * C, d + Wp * C, 0.0f);
      for (int64_t c = 0; c < C; ++c) {
        const float* s = x + n * g.xs[0] + c * g.xs[1] + y * g.xs[2] - g.pw * g.xs[3];
        for (int64_t xx = lo; xx < hi; ++xx) d[xx * C + c] = s[xx * g.xs[3]];
      }
    }
  });
  // off[d]: where pixel d's (kx, c) run of tap row ky = 0 starts in xt.
  std::vector<int32_t> off(static_cast<size_t>(D));
  for (int64_t d = 0; d < D; ++d) {
    const int64_t n = d / g.P, oy = d % g.P / g.OW, ox = d % g.OW;
    off[size_t(d)] = int32_t(((n * Hp + oy * g.sh) * Wp + ox * g.sw) * C);
  }

  // Tiles: (channel block ob, tap row ky, group of R (kx, c) entries); each adds its pixel blocks'
  // sums into acc.
  const int64_t J = g.KW * C, R = k.direct_pixels_max, JG = (J + R - 1) / R;
  const std::vector<int64_t> jstart = even_runs(J, JG);
  const int64_t tiles = OB * g.KH * JG;
  Scratch<float> acc(tiles * R * cb);
  // Pixel blocks of about 1024 (a channel block's packed grad, 128 KiB, stays in L2), each a run
  // of the flattened pixels d = n P + p.
  const std::vector<Block> blocks = weight_grad_pixel_blocks(g);
  int64_t depth_max = 0;
  for (const Block& b : blocks) depth_max = std::max(depth_max, b.cols());
  Scratch<float> gp(OB * depth_max * cb);  // grad of one pixel block: gp[(ob * depth + i) * cb + j]
  for (const Block& blk : blocks) {
    const int64_t d0 = blk.n0 * g.P + blk.p0, dn = blk.cols();
    parallel_for(0, OB * cb, std::max<int64_t>(1, 8192 / dn), [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t ob = q / cb, j = q % cb, o = q;
        float* dst = gp.p + ob * dn * cb + j;
        if (o >= O) {
          for (int64_t i = 0; i < dn; ++i) dst[i * cb] = 0.0f;
          continue;
        }
        for (int64_t d = d0, i = 0; d < d0 + dn;) {  // one output row's run at a time
          const int64_t n = d / g.P, p = d % g.P, oy = p / g.OW, ox0 = p % g.OW;
          const int64_t len = std::min(g.OW - ox0, d0 + dn - d);
          const float* s = go + n * gst[0] + o * gst[1] + oy * gst[2] + ox0 * gst[3];
          for (int64_t e = 0; e < len; ++e, ++i) dst[i * cb] = s[e * gst[3]];
          d += len;
        }
      }
    });
    parallel_for(0, tiles, 1, [&](int64_t t0, int64_t t1) {
      float part[kMaxTile];
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t ob = t / (g.KH * JG), ky = t / JG % g.KH, jg = t % JG;
        const int64_t j0 = jstart[size_t(jg)], n = (jstart[size_t(jg) + 1] - j0) * cb;
        float* a = acc.p + t * R * cb;
        k.direct_pixels(gp.p + ob * dn * cb, xt.p + ky * g.dh * Wp * C + j0, 1, off.data() + d0, dn,
                        int(jstart[size_t(jg) + 1] - j0), d0 == 0 ? a : part);
        if (d0 > 0)
          for (int64_t i = 0; i < n; ++i) a[i] += part[i];
      }
    });
  }
  // acc of tile (ob, ky, jg), entry i, lane j: grad_w[ob cb + j][c][ky][kx], (kx, c) = j0 + i.
  const int64_t KHW = g.KH * g.KW;
  parallel_for(0, tiles, std::max<int64_t>(1, 4096 / (R * cb)), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t ob = t / (g.KH * JG), ky = t / JG % g.KH, jg = t % JG;
      const float* a = acc.p + t * R * cb;
      for (int64_t e = jstart[size_t(jg)], i = 0; e < jstart[size_t(jg) + 1]; ++e, ++i) {
        const int64_t kx = e / C, c = e % C;
        for (int64_t j = 0; j < cb && ob * cb + j < O; ++j)
          gw[((ob * cb + j) * C + c) * KHW + ky * g.KW + kx] = a[i * cb + j];
      }
    }
  });
}

}  // namespace bm::cpu
