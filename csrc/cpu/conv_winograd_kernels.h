// The transforms of Winograd's F(4x4, 3x3) convolution, written once and compiled twice: for the
// baseline target (conv_winograd.cpp) and with AVX2 + FMA (isa/conv_winograd_avx2.cpp); the
// including file names the namespace (BM_WINO_NS) so the two copies never meet at link time.
//
// With d a 6x6 input tile and g a 3x3 filter, the 4x4 output tile is
//   Y = A^T [(G g G^T) . (B^T d B)] A
// (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", interpolation points
// 0, 1, -1, 2, -2 and infinity). Each function works on kLanes tiles (or filters) side by side, one
// per vector lane: every loop below runs over the lane index innermost, so the compiler turns it
// into vector arithmetic of the target's width.
//
// Layout of the transform domain: element xi = 6 * i + j of a tile is row `channel` of matrix xi,
// column `tile`; matrices are ldxi floats apart (the driver multiplies matrix xi of the filters by
// matrix xi of the inputs).
#pragma once
#include <algorithm>
#include <cstdint>
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include "cpu/conv_winograd.h"

namespace bm::cpu::BM_WINO_NS {

constexpr int kLanes = 8;

// t = B^T d along the first index (rows): t[i][j] = sum_k B^T[i][k] d[k][j].
inline void bt_cols(const float (&d)[6][6][kLanes], float (&t)[6][6][kLanes]) {
  for (int j = 0; j < 6; ++j) {
    for (int l = 0; l < kLanes; ++l) {
      const float d0 = d[0][j][l], d1 = d[1][j][l], d2 = d[2][j][l], d3 = d[3][j][l], d4 = d[4][j][l],
                  d5 = d[5][j][l];
      t[0][j][l] = 4.0f * d0 - 5.0f * d2 + d4;
      t[1][j][l] = -4.0f * (d1 + d2) + d3 + d4;
      t[2][j][l] = 4.0f * (d1 - d2) - d3 + d4;
      t[3][j][l] = 2.0f * (d3 - d1) - d2 + d4;
      t[4][j][l] = 2.0f * (d1 - d3) - d2 + d4;
      t[5][j][l] = 4.0f * d1 - 5.0f * d3 + d5;
    }
  }
}

// v = t B along the second index (columns), stored: v[i][j] of lane l (column col + l of the
// transform domain) at dst[(6 i + j) * ldxi + panel_at(col + l, ps)].
inline int64_t panel_at(int64_t col, int64_t ps) { return (col / kPanelCols) * ps + col % kPanelCols; }

inline void bt_rows_store(const float (&t)[6][6][kLanes], float* dst, int64_t ldxi, int64_t ps, int64_t col,
                          int lanes) {
  const bool one_panel = lanes == kLanes && col % kPanelCols + kLanes <= kPanelCols;
  dst += panel_at(col, ps);
  for (int i = 0; i < 6; ++i) {
    float v[6][kLanes];
    for (int l = 0; l < kLanes; ++l) {
      const float d0 = t[i][0][l], d1 = t[i][1][l], d2 = t[i][2][l], d3 = t[i][3][l], d4 = t[i][4][l],
                  d5 = t[i][5][l];
      v[0][l] = 4.0f * d0 - 5.0f * d2 + d4;
      v[1][l] = -4.0f * (d1 + d2) + d3 + d4;
      v[2][l] = 4.0f * (d1 - d2) - d3 + d4;
      v[3][l] = 2.0f * (d3 - d1) - d2 + d4;
      v[4][l] = 2.0f * (d1 - d3) - d2 + d4;
      v[5][l] = 4.0f * d1 - 5.0f * d3 + d5;
    }
    for (int j = 0; j < 6; ++j) {
      float* o = dst + (6 * i + j) * ldxi;
      if (one_panel) {
        for (int l = 0; l < kLanes; ++l) o[l] = v[j][l];
      } else {  // the lanes cross into the next panel, or fewer lanes
        for (int l = 0; l < lanes; ++l) o[panel_at(col + l, ps) - panel_at(col, ps)] = v[j][l];
      }
    }
  }
}

// Input tiles (ty, tx) for tx in [txa, txb) of one plane (H x W, rows rs apart, unit stride along
// a row), the plane padded by (ph, pw) zeros: tile (ty, tx) reads rows 4 ty - ph + [0, 6) and
// columns 4 tx - pw + [0, 6). Tile txa is column col of the transform domain; matrix xi's
// column c goes to dst + xi * ldxi + panel_at(c, ps) (16-column panels, ps floats apart).
inline void input_run(const float* plane, int64_t H, int64_t W, int64_t rs, int64_t ph, int64_t pw, int64_t ty,
                      int64_t txa, int64_t txb, float* dst, int64_t ldxi, int64_t ps, int64_t col) {
  const int64_t y0 = 4 * ty - ph;
  const bool rows_inside = y0 >= 0 && y0 + 6 <= H;
  for (int64_t t0 = txa; t0 < txb; t0 += kLanes) {
    const int lanes = int(std::min<int64_t>(kLanes, txb - t0));
    const int64_t x0 = 4 * t0 - pw, x_end = 4 * (t0 + kLanes - 1) - pw + 6;
    float d[6][6][kLanes];
    if (rows_inside && x0 >= 0 && x_end <= W) {
      for (int i = 0; i < 6; ++i) {
        const float* r = plane + (y0 + i) * rs + x0;
        for (int j = 0; j < 6; ++j)
          for (int l = 0; l < kLanes; ++l) d[i][j][l] = r[4 * l + j];
      }
    } else {  // a border: zeros outside the plane
      for (int i = 0; i < 6; ++i) {
        const int64_t y = y0 + i;
        const float* r = plane + y * rs;
        for (int j = 0; j < 6; ++j) {
          for (int l = 0; l < kLanes; ++l) {
            const int64_t x = x0 + 4 * l + j;
            d[i][j][l] = (y >= 0 && y < H && x >= 0 && x < W && l < lanes) ? r[x] : 0.0f;
          }
        }
      }
    }
    float t[6][6][kLanes];
    bt_cols(d, t);
    bt_rows_store(t, dst, ldxi, ps, col + (t0 - txa), lanes);
  }
}

// Output tiles (ty, tx), tx in [txa, txb), of one output plane (OH x OW, strides os2, os3): the
// products of the tiles (matrix xi at m + xi * ldxi, column tx - txa) transformed back, plus bias.
inline void output_run(const float* m, int64_t ldxi, float bias, float* plane, int64_t OH, int64_t OW, int64_t os2,
                       int64_t os3, int64_t ty, int64_t txa, int64_t txb) {
  for (int64_t t0 = txa; t0 < txb; t0 += kLanes) {
    const int lanes = int(std::min<int64_t>(kLanes, txb - t0));
    float s[4][6][kLanes];  // s = A^T m along the first index
    for (int j = 0; j < 6; ++j) {
      float c[6][kLanes];
      for (int k = 0; k < 6; ++k) {
        const float* src = m + (6 * k + j) * ldxi + (t0 - txa);
        if (lanes == kLanes) {
          for (int l = 0; l < kLanes; ++l) c[k][l] = src[l];
        } else {
          for (int l = 0; l < kLanes; ++l) c[k][l] = l < lanes ? src[l] : 0.0f;
        }
      }
      for (int l = 0; l < kLanes; ++l) {
        const float a12 = c[1][l] + c[2][l], d12 = c[1][l] - c[2][l];
        const float a34 = c[3][l] + c[4][l], d34 = c[3][l] - c[4][l];
        s[0][j][l] = c[0][l] + a12 + a34;
        s[1][j][l] = d12 + 2.0f * d34;
        s[2][j][l] = a12 + 4.0f * a34;
        s[3][j][l] = d12 + 8.0f * d34 + c[5][l];
      }
    }
    float y[4][4][kLanes];  // y = s A along the second index
    for (int i = 0; i < 4; ++i) {
      for (int l = 0; l < kLanes; ++l) {
        const float a12 = s[i][1][l] + s[i][2][l], d12 = s[i][1][l] - s[i][2][l];
        const float a34 = s[i][3][l] + s[i][4][l], d34 = s[i][3][l] - s[i][4][l];
        y[i][0][l] = s[i][0][l] + a12 + a34 + bias;
        y[i][1][l] = d12 + 2.0f * d34 + bias;
        y[i][2][l] = a12 + 4.0f * a34 + bias;
        y[i][3][l] = d12 + 8.0f * d34 + s[i][5][l] + bias;
      }
    }
    const int rows = int(std::min<int64_t>(4, OH - 4 * ty));
    for (int l = 0; l < lanes; ++l) {
      const int64_t x = 4 * (t0 + l);
      const int cols = int(std::min<int64_t>(4, OW - x));
      for (int i = 0; i < rows; ++i) {
        float* r = plane + (4 * ty + i) * os2 + x * os3;
        for (int j = 0; j < cols; ++j) r[j * os3] = y[i][j][l];
      }
    }
  }
}

// Filters (o, c) for c in [c0, c1): w points at filter (o, 0), 3x3 filters 9 floats apart;
// u = G g G^T goes to dst[xi * ldxi + (c - c0) * cs].
inline void weight_run(const float* w, int64_t c0, int64_t c1, float* dst, int64_t ldxi, int64_t cs) {
  for (int64_t cb = c0; cb < c1; cb += kLanes) {
    const int lanes = int(std::min<int64_t>(kLanes, c1 - cb));
    float g[3][3][kLanes];
    for (int k = 0; k < 9; ++k)
      for (int l = 0; l < kLanes; ++l) g[k / 3][k % 3][l] = l < lanes ? w[(cb + l) * 9 + k] : 0.0f;
    float r[6][3][kLanes];  // r = G g
    for (int j = 0; j < 3; ++j) {
      for (int l = 0; l < kLanes; ++l) {
        const float g0 = g[0][j][l], g1 = g[1][j][l], g2 = g[2][j][l];
        r[0][j][l] = g0 * 0.25f;
        r[1][j][l] = (g0 + g1 + g2) * (-1.0f / 6);
        r[2][j][l] = (g0 - g1 + g2) * (-1.0f / 6);
        r[3][j][l] = g0 * (1.0f / 24) + g1 * (1.0f / 12) + g2 * (1.0f / 6);
        r[4][j][l] = g0 * (1.0f / 24) - g1 * (1.0f / 12) + g2 * (1.0f / 6);
        r[5][j][l] = g2;
      }
    }
    for (int i = 0; i < 6; ++i) {  // u = r G^T
      float u[6][kLanes];
      for (int l = 0; l < kLanes; ++l) {
        const float g0 = r[i][0][l], g1 = r[i][1][l], g2 = r[i][2][l];
        u[0][l] = g0 * 0.25f;
        u[1][l] = (g0 + g1 + g2) * (-1.0f / 6);
        u[2][l] = (g0 - g1 + g2) * (-1.0f / 6);
        u[3][l] = g0 * (1.0f / 24) + g1 * (1.0f / 12) + g2 * (1.0f / 6);
        u[4][l] = g0 * (1.0f / 24) - g1 * (1.0f / 12) + g2 * (1.0f / 6);
        u[5][l] = g2;
      }
      for (int j = 0; j < 6; ++j)
        for (int l = 0; l < lanes; ++l) dst[(6 * i + j) * ldxi + (cb - c0 + l) * cs] = u[j][l];
    }
  }
}

// c (kPanelRows x kPanelCols, rows ldc apart) = a @ b: a is a panel of kPanelRows rows stored
// column by column (a[k * kPanelRows + r]), b a panel of kPanelCols columns stored row by row
// (b[k * kPanelCols + j]), k in [0, K).
inline void panel_product(const float* a, const float* b, int64_t K, float* c, int64_t ldc) {
#if defined(__AVX2__) && defined(__FMA__)
  static_assert(kPanelRows == 6 && kPanelCols == 16, "the AVX2 kernel holds a 6 x 16 block in 12 registers");
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00,
         c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t k = 0; k < K; ++k, a += 6, b += 16) {
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
    __m256 ar = _mm256_broadcast_ss(a);
    c00 = _mm256_fmadd_ps(ar, b0, c00), c01 = _mm256_fmadd_ps(ar, b1, c01);
    ar = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(ar, b0, c10), c11 = _mm256_fmadd_ps(ar, b1, c11);
    ar = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(ar, b0, c20), c21 = _mm256_fmadd_ps(ar, b1, c21);
    ar = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(ar, b0, c30), c31 = _mm256_fmadd_ps(ar, b1, c31);
    ar = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(ar, b0, c40), c41 = _mm256_fmadd_ps(ar, b1, c41);
    ar = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(ar, b0, c50), c51 = _mm256_fmadd_ps(ar, b1, c51);
  }
  _mm256_storeu_ps(c, c00), _mm256_storeu_ps(c + 8, c01);
  _mm256_storeu_ps(c + ldc, c10), _mm256_storeu_ps(c + ldc + 8, c11);
  _mm256_storeu_ps(c + 2 * ldc, c20), _mm256_storeu_ps(c + 2 * ldc + 8, c21);
  _mm256_storeu_ps(c + 3 * ldc, c30), _mm256_storeu_ps(c + 3 * ldc + 8, c31);
  _mm256_storeu_ps(c + 4 * ldc, c40), _mm256_storeu_ps(c + 4 * ldc + 8, c41);
  _mm256_storeu_ps(c + 5 * ldc, c50), _mm256_storeu_ps(c + 5 * ldc + 8, c51);
#else
  float acc[kPanelRows][kPanelCols] = {};
  for (int64_t k = 0; k < K; ++k, a += kPanelRows, b += kPanelCols)
    for (int r = 0; r < kPanelRows; ++r)
      for (int j = 0; j < kPanelCols; ++j) acc[r][j] += a[r] * b[j];
  for (int r = 0; r < kPanelRows; ++r)
    for (int j = 0; j < kPanelCols; ++j) c[r * ldc + j] = acc[r][j];
#endif
}

inline const WinogradKernels& kernels() {
  static const WinogradKernels k{weight_run, input_run, output_run, panel_product};
  return k;
}

}  // namespace bm::cpu::BM_WINO_NS
