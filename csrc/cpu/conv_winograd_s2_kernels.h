// The transforms of Winograd's convolution for 3x3 filters at stride 2 (2x2 output tiles), included
// by conv_winograd_kernels.h into each instruction set's namespace (BM_WINO_NS), beside the
// stride-1 transforms whose layout and lane conventions they share.
//
// Along one axis, two outputs of a 3-tap filter g at stride 2 read five inputs d0..d4:
//   y0 = g0 d0 + g1 d1 + g2 d2,  y1 = g0 d2 + g1 d3 + g2 d4.
// The even inputs (d0, d2, d4) meet the taps (g0, g2) as a 2-tap stride-1 convolution, done as
// Winograd's F(2, 2) in three products; the odd inputs (d1, d3) meet g1 alone, two products:
//   m0 = (d0 - d2) g0,  m1 = d2 (g0 + g2),  m2 = (d4 - d2) g2,  m3 = d1 g1,  m4 = d3 g1,
//   y0 = m0 + m1 + m3,  y1 = m1 + m2 + m4.
// Five products for two outputs instead of six; in 2-D, 25 for a 2x2 tile instead of 36. Every
// coefficient is 0 or +-1 (no scaling, no cancellation of large terms), so the rounding stays that
// of a direct sum's size. The points: B^T d = (d0 - d2, d2, d4 - d2, d1, d3), G g = (g0, g0 + g2,
// g2, g1, g1), and A^T m = (m0 + m1 + m3, m1 + m2 + m4).
//
// Element xi = 5 i + j of a tile is row `channel` of matrix xi, column `tile` (the stride-1 layout
// with 25 matrices instead of 16).
#pragma once

namespace bm::cpu::BM_WINO_NS {

constexpr int kSpanS2 = 4 * kLanes + 1;  // input columns kLanes tiles read

#if defined(__AVX2__)
// Columns [8 k, 8 k + 8) of r, those outside [xa, xb) read as zeros and not touched (a masked
// load does not fault on them): r may point before a row's start or run past its end.
inline __m256 load_columns(const float* r, int k, int64_t xa, int64_t xb) {
#if defined(__AVX512VL__)
  const auto below = [&](int64_t x) { return (1u << std::clamp<int64_t>(x - 8 * k, 0, 8)) - 1; };
  return _mm256_maskz_loadu_ps(__mmask8(below(xb) & ~below(xa)), r + 8 * k);
#else
  const __m256i at = _mm256_add_epi32(_mm256_set1_epi32(8 * k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i in = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(int(xa)), at),
                                         _mm256_cmpgt_epi32(_mm256_set1_epi32(int(xb)), at));
  return _mm256_maskload_ps(r + 8 * k, in);
#endif
}

// p[j][l] = r[4 l + j] for j < 5, l < 8: one input row of eight tiles side by side (tile l starts
// at column 4 l), columns outside [xa, xb) of the 33 as zeros. A 4-way deinterleave of r[0..32)
// (an 8 x 4 transpose), then p[4] = p[0] moved down a lane with r[32] in the last.
inline void deinterleave_tiles_s2(const float* r, int64_t xa, int64_t xb, __m256 p[5]) {
  __m256 a, b, c, d, e;
  if (xa == 0 && xb == kSpanS2) {
    a = _mm256_loadu_ps(r), b = _mm256_loadu_ps(r + 8), c = _mm256_loadu_ps(r + 16), d = _mm256_loadu_ps(r + 24);
    e = _mm256_broadcast_ss(r + 32);
  } else {
    a = load_columns(r, 0, xa, xb), b = load_columns(r, 1, xa, xb), c = load_columns(r, 2, xa, xb);
    d = load_columns(r, 3, xa, xb);
    e = xa <= 32 && xb > 32 ? _mm256_broadcast_ss(r + 32) : _mm256_setzero_ps();
  }
  // Rows of 4 (one tile's columns j = 0..3), tiles l and l + 4 in the two 128-bit halves.
  const __m256 r0 = _mm256_permute2f128_ps(a, c, 0x20), r1 = _mm256_permute2f128_ps(a, c, 0x31);
  const __m256 r2 = _mm256_permute2f128_ps(b, d, 0x20), r3 = _mm256_permute2f128_ps(b, d, 0x31);
  const __m256 u0 = _mm256_unpacklo_ps(r0, r1), u1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 u2 = _mm256_unpacklo_ps(r2, r3), u3 = _mm256_unpackhi_ps(r2, r3);
  p[0] = _mm256_shuffle_ps(u0, u2, 0x44);
  p[1] = _mm256_shuffle_ps(u0, u2, 0xEE);
  p[2] = _mm256_shuffle_ps(u1, u3, 0x44);
  p[3] = _mm256_shuffle_ps(u1, u3, 0xEE);
  const __m256 down = _mm256_permutevar8x32_ps(p[0], _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7));
  p[4] = _mm256_blend_ps(down, e, 0x80);
}
#endif

// v = B^T d B for kLanes tiles side by side: row i of tile l's 5 x 5 input d is rows[i] + 4 l (a
// null row: zeros), its columns outside [xa, xb) of the kSpanS2 zeros (padding, or past the last
// tile); element xi of tile l goes to base[xi * ldxi + l], l < lanes.
inline void transform_tiles_s2(const float* const rows[5], int64_t xa, int64_t xb, float* base, int64_t ldxi,
                               int lanes) {
#if defined(__AVX2__)
  __m256 t[5][5];  // t = B^T d along the rows
  {
    __m256 d[5][5];
    for (int i = 0; i < 5; ++i) {
      if (rows[i]) deinterleave_tiles_s2(rows[i], xa, xb, d[i]);
      else
        for (int j = 0; j < 5; ++j) d[i][j] = _mm256_setzero_ps();
    }
    for (int j = 0; j < 5; ++j) {
      t[0][j] = _mm256_sub_ps(d[0][j], d[2][j]);
      t[1][j] = d[2][j];
      t[2][j] = _mm256_sub_ps(d[4][j], d[2][j]);
      t[3][j] = d[1][j];
      t[4][j] = d[3][j];
    }
  }
  for (int i = 0; i < 5; ++i) {
    const __m256 v[5] = {_mm256_sub_ps(t[i][0], t[i][2]), t[i][2], _mm256_sub_ps(t[i][4], t[i][2]), t[i][1],
                         t[i][3]};
    for (int j = 0; j < 5; ++j) store_lanes(base + (5 * i + j) * ldxi, v[j], lanes);
  }
#else
  float d[5][5][kLanes];
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j)
      for (int l = 0; l < kLanes; ++l) {
        const int64_t x = 4 * l + j;
        d[i][j][l] = rows[i] && x >= xa && x < xb ? rows[i][x] : 0.0f;
      }
  float t[5][5][kLanes];  // t = B^T d along the rows
  for (int j = 0; j < 5; ++j) {
    for (int l = 0; l < kLanes; ++l) {
      t[0][j][l] = d[0][j][l] - d[2][j][l];
      t[1][j][l] = d[2][j][l];
      t[2][j][l] = d[4][j][l] - d[2][j][l];
      t[3][j][l] = d[1][j][l];
      t[4][j][l] = d[3][j][l];
    }
  }
  for (int i = 0; i < 5; ++i) {
    float v[5][kLanes];  // v = t B along the columns
    for (int l = 0; l < kLanes; ++l) {
      v[0][l] = t[i][0][l] - t[i][2][l];
      v[1][l] = t[i][2][l];
      v[2][l] = t[i][4][l] - t[i][2][l];
      v[3][l] = t[i][1][l];
      v[4][l] = t[i][3][l];
    }
    for (int j = 0; j < 5; ++j)
      for (int l = 0; l < lanes; ++l) base[(5 * i + j) * ldxi + l] = v[j][l];
  }
#endif
}

// input_run's contract (conv_winograd_kernels.h) at stride 2: tile (ty, tx) reads rows
// 4 ty - ph + [0, 5) and columns 4 tx - pw + [0, 5), zeros outside the plane.
inline void input_run_s2(const float* plane, int64_t H, int64_t W, int64_t rs, int64_t ph, int64_t pw, int64_t ty,
                         int64_t txa, int64_t txb, float* dst, int64_t ldxi, int64_t ps, int64_t col) {
  const int64_t y0 = 4 * ty - ph;
  for (int64_t t0 = txa, lanes = 0; t0 < txb; t0 += lanes) {
    // Groups of tiles end at multiples of kLanes columns of the transform domain (as input_run's).
    const int64_t c = col + (t0 - txa);
    lanes = std::min<int64_t>(kLanes - c % kLanes, txb - t0);
    const int64_t x0 = 4 * t0 - pw;
    const int64_t xa = std::max<int64_t>(x0, 0) - x0, xb = std::min<int64_t>(x0 + 4 * lanes + 1, W) - x0;
    const float* rows[5];
    for (int i = 0; i < 5; ++i) {
      const int64_t y = y0 + i;
      rows[i] = y >= 0 && y < H ? plane + y * rs + x0 : nullptr;
    }
    transform_tiles_s2(rows, xa, xb, dst + panel_at(c, ps), ldxi, int(lanes));
  }
}

// The stride-2 axis of output_tiles and filter_tiles (conv_winograd_kernels.h): A^T m =
// (m0 + m1 + m3, m1 + m2 + m4), G g = (g0, g0 + g2, g2, g1, g1).
struct AxisS2 {
  static constexpr int n = 5;
  template <typename V>
  static void out(const V* c, V* y) {
    y[0] = c[0] + c[1] + c[3];
    y[1] = c[1] + c[2] + c[4];
  }
  static void filter(const float* g, float* u) {
    u[0] = g[0], u[1] = g[0] + g[2], u[2] = g[2], u[3] = g[1], u[4] = g[1];
  }
};

// output_run's and weight_run's contracts (conv_winograd_kernels.h) for 25-element stride-2 tiles.
inline void output_run_s2(const float* m, int64_t ldxi, float bias, float* plane, int64_t OH, int64_t OW,
                          int64_t os2, int64_t os3, int64_t ty, int64_t txa, int64_t txb) {
  output_tiles<AxisS2>(m, ldxi, bias, plane, OH, OW, os2, os3, ty, txa, txb);
}
inline void weight_run_s2(const float* w, int64_t c0, int64_t c1, float* dst, int64_t ldxi, int64_t cs) {
  filter_tiles<AxisS2>(w, c0, c1, dst, ldxi, cs);
}

}  // namespace bm::cpu::BM_WINO_NS
