// The transforms of Winograd's F(2x2, 3x3) convolution and the panel product kernel, written once
// and compiled three times: for the baseline target (conv_winograd.cpp), with AVX2 + FMA
// (isa/conv_winograd_avx2.cpp) and with AVX-512 (isa/conv_winograd_avx512.cpp); the including
// file names the namespace (BM_WINO_NS) so the copies never meet at link time. The AVX2 and
// AVX-512 product kernels add each element's products in the same order with one FMA each, so
// they give the same bits.
//
// With d a 4x4 input tile and g a 3x3 filter, the 2x2 output tile is
//   Y = A^T [(G g G^T) . (B^T d B)] A
// (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", points 0, 1, -1 and
// infinity). F(4x4, 3x3) would save more multiplications but its transforms scale values by up to
// 8 and cancel them again: about 10x the rounding error of a direct sum, outside float32
// convolution's tolerances; F(2x2, 3x3) only adds, subtracts and halves. Each function works on
// kLanes tiles (or filters) side by side, one per vector lane: every loop below runs over the lane
// index innermost, so the compiler turns it into vector arithmetic of the target's width.
//
// Layout of the transform domain: element xi = 4 * i + j of a tile is row `channel` of matrix xi,
// column `tile`; matrices are ldxi floats apart (the driver multiplies matrix xi of the filters by
// matrix xi of the inputs).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#if (defined(__AVX2__) && defined(__FMA__)) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "cpu/conv_winograd.h"

namespace bm::cpu::BM_WINO_NS {

constexpr int kLanes = 8;

inline int64_t panel_at(int64_t col, int64_t ps) { return (col / kPanelCols) * ps + col % kPanelCols; }

// d[j][l] = r[2 l + j] for j < 4, l < kLanes: one input row of kLanes tiles side by side (tile l
// starts at column 2 l). (transform_tiles' AVX2 path does this with a deinterleave.)
inline void tile_columns(const float* r, float (*d)[kLanes]) {
  for (int j = 0; j < 4; ++j)
    for (int l = 0; l < kLanes; ++l) d[j][l] = r[2 * l + j];
}

// r[2 l] = a[l], r[2 l + 1] = b[l] for l < kLanes: one output row of kLanes 2-wide tiles.
inline void interleave_tiles(const float* a, const float* b, float* r) {
#if defined(__AVX2__)
  const __m256 va = _mm256_loadu_ps(a), vb = _mm256_loadu_ps(b);
  const __m256 lo = _mm256_unpacklo_ps(va, vb), hi = _mm256_unpackhi_ps(va, vb);  // per 128-bit half
  _mm256_storeu_ps(r, _mm256_permute2f128_ps(lo, hi, 0x20));
  _mm256_storeu_ps(r + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
#else
  for (int l = 0; l < kLanes; ++l) r[2 * l] = a[l], r[2 * l + 1] = b[l];
#endif
}

#if defined(__AVX2__)
// Lanes [0, lanes) on: partial groups load and store only the run's lanes (the others read as zeros
// and are never written).
inline __m256i lane_mask(int lanes) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// d[i] = v[i] for i < n (n <= 0: nothing): the first n lanes of one vector. AVX-512 stores with a
// lane mask; AVX2 as at most three stores of 4, 2 and 1 floats: its masked store (vmaskmovps) is
// a long microcoded sequence on AMD's Zen cores, about 10 cycles a store. (The direct kernels'
// 6-pixel AVX2 blocks end every row of outputs in one: on Zen 4 the 7x7 stem ran 13% faster with
// the split stores. The stride-2 Winograd's 14-wide outputs make every tile group partial: with
// masked stores its input transform took a fifth of the convolution.)
inline void store_lanes(float* d, __m256 v, int n) {
  if (n >= 8) return _mm256_storeu_ps(d, v);
#if defined(__AVX512VL__)
  _mm256_mask_storeu_ps(d, __mmask8((1u << std::max(n, 0)) - 1), v);
#else
  __m128 x = _mm256_castps256_ps128(v);
  if (n >= 4) _mm_storeu_ps(d, x), x = _mm256_extractf128_ps(v, 1), d += 4, n -= 4;
  if (n >= 2) _mm_storel_pi(reinterpret_cast<__m64*>(d), x), x = _mm_movehl_ps(x, x), d += 2, n -= 2;
  if (n >= 1) _mm_store_ss(d, x);
#endif
}
// The first `lanes` floats at p, zeros in the other lanes (whose memory is not read).
inline __m256 load_lanes(const float* p, int lanes) {
  if (lanes >= kLanes) return _mm256_loadu_ps(p);
#if defined(__AVX512VL__)
  return _mm256_maskz_loadu_ps(__mmask8((1u << std::max(lanes, 0)) - 1), p);
#else
  return _mm256_maskload_ps(p, lane_mask(lanes));
#endif
}
#endif

// v = B^T d B for kLanes tiles side by side (rows[i] + 2 l: row i of tile l's 4 x 4 input d);
// element xi of tile l goes to base[xi * ldxi + l], l < lanes.
inline void transform_tiles(const float* const rows[4], float* base, int64_t ldxi, int lanes) {
#if defined(__AVX2__)
  // The same sums in registers: through arrays on the stack, each vector was stored in pieces and
  // read back whole, which stalls store forwarding on every tile.
  __m256 d[4][4];
  for (int i = 0; i < 4; ++i) {
    for (int h = 0; h < 2; ++h) {  // columns 2l + 2h and 2l + 2h + 1 (tile_columns' deinterleave)
      const __m256 lo = _mm256_loadu_ps(rows[i] + 2 * h), hi = _mm256_loadu_ps(rows[i] + 2 * h + 8);
      d[i][2 * h] = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88)), 0xD8));
      d[i][2 * h + 1] = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0xDD)), 0xD8));
    }
  }
  __m256 t[4][4];  // t = B^T d along the rows
  for (int j = 0; j < 4; ++j) {
    t[0][j] = _mm256_sub_ps(d[0][j], d[2][j]);
    t[1][j] = _mm256_add_ps(d[1][j], d[2][j]);
    t[2][j] = _mm256_sub_ps(d[2][j], d[1][j]);
    t[3][j] = _mm256_sub_ps(d[1][j], d[3][j]);
  }
  for (int i = 0; i < 4; ++i) {
    const __m256 v[4] = {_mm256_sub_ps(t[i][0], t[i][2]), _mm256_add_ps(t[i][1], t[i][2]),
                         _mm256_sub_ps(t[i][2], t[i][1]), _mm256_sub_ps(t[i][1], t[i][3])};
    for (int j = 0; j < 4; ++j) store_lanes(base + (4 * i + j) * ldxi, v[j], lanes);
  }
#else
  float d[4][4][kLanes];
  for (int i = 0; i < 4; ++i) tile_columns(rows[i], d[i]);
  float t[4][4][kLanes];  // t = B^T d along the rows
  for (int j = 0; j < 4; ++j) {
    for (int l = 0; l < kLanes; ++l) {
      t[0][j][l] = d[0][j][l] - d[2][j][l];
      t[1][j][l] = d[1][j][l] + d[2][j][l];
      t[2][j][l] = d[2][j][l] - d[1][j][l];
      t[3][j][l] = d[1][j][l] - d[3][j][l];
    }
  }
  for (int i = 0; i < 4; ++i) {
    float v[4][kLanes];  // v = t B along the columns
    for (int l = 0; l < kLanes; ++l) {
      v[0][l] = t[i][0][l] - t[i][2][l];
      v[1][l] = t[i][1][l] + t[i][2][l];
      v[2][l] = t[i][2][l] - t[i][1][l];
      v[3][l] = t[i][1][l] - t[i][3][l];
    }
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < lanes; ++l) base[(4 * i + j) * ldxi + l] = v[j][l];
  }
#endif
}

// Input tiles (ty, tx) for tx in [txa, txb) of one plane (H x W, rows rs apart, unit stride along
// a row), the plane padded by (ph, pw) zeros: tile (ty, tx) reads rows 2 ty - ph + [0, 4) and
// columns 2 tx - pw + [0, 4). Tile txa is column col of the transform domain; v = B^T d B, element
// xi of tile column c, goes to dst + xi * ldxi + panel_at(c, ps) (16-column panels, ps floats apart).
inline void input_run(const float* plane, int64_t H, int64_t W, int64_t rs, int64_t ph, int64_t pw, int64_t ty,
                      int64_t txa, int64_t txb, float* dst, int64_t ldxi, int64_t ps, int64_t col) {
  constexpr int kSpan = 2 * kLanes + 2;  // input columns kLanes tiles read
  const int64_t y0 = 2 * ty - ph;
  const bool rows_inside = y0 >= 0 && y0 + 4 <= H;
  for (int64_t t0 = txa, lanes = 0; t0 < txb; t0 += lanes) {
    // Groups of tiles end at multiples of kLanes columns of the transform domain, so a group never
    // crosses a panel's edge and all but a run's first and last store whole vectors.
    const int64_t c = col + (t0 - txa);
    lanes = std::min<int64_t>(kLanes - c % kLanes, txb - t0);
    const int64_t x0 = 2 * t0 - pw;
    // The 4 x kSpan input window, read in place when it lies inside the plane, else copied into
    // a zero-padded buffer (a border, or a run shorter than kLanes tiles): either way the
    // arithmetic below reads one row pointer per row, with no test per element.
    const float* rows[4];
    float pad[4][kSpan];
    if (rows_inside && x0 >= 0 && x0 + kSpan <= W && lanes == kLanes) {
      for (int i = 0; i < 4; ++i) rows[i] = plane + (y0 + i) * rs + x0;
    } else {
      const int64_t xa = std::max<int64_t>(x0, 0) - x0, xb = std::min<int64_t>(x0 + 2 * lanes + 2, W) - x0;
      for (int i = 0; i < 4; ++i) {
        const int64_t y = y0 + i;
        const float* r = plane + y * rs + x0;
        const bool row = y >= 0 && y < H;
        for (int64_t x = 0; x < kSpan; ++x) pad[i][x] = row && x >= xa && x < xb ? r[x] : 0.0f;  // (no memcpy call)
        rows[i] = pad[i];
      }
    }
    float* base = dst + panel_at(c, ps);  // tiles c .. c + lanes - 1: columns of one panel
    transform_tiles(rows, base, ldxi, int(lanes));
  }
}

// y[i][j][l] (l < lanes): output (2 ty + i, 2 (t0 + l) + j) of the plane (OH x OW, strides os2,
// os3), where it lies inside the plane.
inline void store_output_tiles(const float (*y)[2][kLanes], int lanes, float* plane, int64_t OH, int64_t OW,
                               int64_t os2, int64_t os3, int64_t ty, int64_t t0) {
  const int rows = int(std::min<int64_t>(2, OH - 2 * ty));
  if (lanes == kLanes && os3 == 1 && 2 * (t0 + kLanes) <= OW) {  // whole tiles, contiguous rows
    for (int i = 0; i < rows; ++i) interleave_tiles(y[i][0], y[i][1], plane + (2 * ty + i) * os2 + 2 * t0);
    return;
  }
#if defined(__AVX2__)
  if (os3 == 1) {  // contiguous rows, a partial group or a row's end: the run's columns only
    const int n = int(std::min<int64_t>(2 * lanes, OW - 2 * t0));
    for (int i = 0; i < rows; ++i) {
      alignas(32) float r[2 * kLanes];
      interleave_tiles(y[i][0], y[i][1], r);
      float* dst = plane + (2 * ty + i) * os2 + 2 * t0;
      store_lanes(dst, _mm256_load_ps(r), n);
      if (n > kLanes) store_lanes(dst + kLanes, _mm256_load_ps(r + kLanes), n - kLanes);
    }
    return;
  }
#endif
  for (int l = 0; l < lanes; ++l) {
    const int64_t x = 2 * (t0 + l);
    const int cols = int(std::min<int64_t>(2, OW - x));
    for (int i = 0; i < rows; ++i) {
      float* r = plane + (2 * ty + i) * os2 + x * os3;
      for (int j = 0; j < cols; ++j) r[j * os3] = y[i][j][l];
    }
  }
}

// One axis of the forward's output transform A^T (n products -> 2 outputs) and filter transform G
// (3 taps -> n elements): stride 1 here (F(2, 3), Lavin and Gray's points 0, 1, -1, infinity),
// stride 2 in conv_winograd_s2_kernels.h. V is float or __m256: GCC's and Clang's vector operators
// are the same single additions as the intrinsics, so every copy adds in the same order.
struct AxisS1 {
  static constexpr int n = 4;
  template <typename V>
  static void out(const V* c, V* y) {
    y[0] = c[0] + c[1] + c[2];
    y[1] = c[1] - c[2] - c[3];
  }
  static void filter(const float* g, float* u) {
    u[0] = g[0], u[1] = 0.5f * (g[0] + g[1] + g[2]), u[2] = 0.5f * (g[0] - g[1] + g[2]), u[3] = g[2];
  }
};

// Output tiles (ty, tx), tx in [txa, txb), of one output plane (OH x OW, strides os2, os3): the
// products of the tiles (matrix xi at m + xi * ldxi, column tx - txa, xi < Ax::n squared)
// transformed back, y = A^T c A, plus bias.
template <typename Ax>
inline void output_tiles(const float* m, int64_t ldxi, float bias, float* plane, int64_t OH, int64_t OW, int64_t os2,
                         int64_t os3, int64_t ty, int64_t txa, int64_t txb) {
  constexpr int n = Ax::n;
  for (int64_t t0 = txa; t0 < txb; t0 += kLanes) {
    const int lanes = int(std::min<int64_t>(kLanes, txb - t0));
    alignas(32) float y[2][2][kLanes];
#if defined(__AVX2__)
    {  // kLanes tiles in the vector, in registers (see transform_tiles)
      __m256 c[n][n];
      for (int xi = 0; xi < n * n; ++xi) c[xi / n][xi % n] = load_lanes(m + xi * ldxi + (t0 - txa), lanes);
      const __m256 vb = _mm256_set1_ps(bias);
      __m256 sv[2][n];  // s = A^T c along the rows
      for (int j = 0; j < n; ++j) {
        __m256 col[n], r[2];
        for (int i = 0; i < n; ++i) col[i] = c[i][j];
        Ax::out(col, r);
        sv[0][j] = r[0], sv[1][j] = r[1];
      }
      for (int i = 0; i < 2; ++i) {  // y = s A along the columns
        __m256 r[2];
        Ax::out(sv[i], r);
        _mm256_store_ps(y[i][0], _mm256_add_ps(r[0], vb));
        _mm256_store_ps(y[i][1], _mm256_add_ps(r[1], vb));
      }
    }
#else
    float c[n][n][kLanes];
    for (int xi = 0; xi < n * n; ++xi) {
      const float* src = m + xi * ldxi + (t0 - txa);
      for (int l = 0; l < kLanes; ++l) c[xi / n][xi % n][l] = l < lanes ? src[l] : 0.0f;
    }
    for (int l = 0; l < kLanes; ++l) {
      float sv[2][n];  // s = A^T c along the rows
      for (int j = 0; j < n; ++j) {
        float col[n], r[2];
        for (int i = 0; i < n; ++i) col[i] = c[i][j][l];
        Ax::out(col, r);
        sv[0][j] = r[0], sv[1][j] = r[1];
      }
      for (int i = 0; i < 2; ++i) {  // y = s A along the columns
        float r[2];
        Ax::out(sv[i], r);
        y[i][0][l] = r[0] + bias, y[i][1][l] = r[1] + bias;
      }
    }
#endif
    store_output_tiles(y, lanes, plane, OH, OW, os2, os3, ty, t0);
  }
}

// Filters (o, c) for c in [c0, c1): w points at filter (o, 0), 3x3 filters 9 floats apart;
// u = G g G^T (Ax::n squared elements) goes to dst[xi * ldxi + (c - c0) * cs].
template <typename Ax>
inline void filter_tiles(const float* w, int64_t c0, int64_t c1, float* dst, int64_t ldxi, int64_t cs) {
  constexpr int n = Ax::n;
  for (int64_t cb = c0; cb < c1; cb += kLanes) {
    const int lanes = int(std::min<int64_t>(kLanes, c1 - cb));
    float g[3][3][kLanes];
    for (int k = 0; k < 9; ++k)
      for (int l = 0; l < kLanes; ++l) g[k / 3][k % 3][l] = l < lanes ? w[(cb + l) * 9 + k] : 0.0f;
    float r[n][3][kLanes];  // r = G g
    for (int j = 0; j < 3; ++j)
      for (int l = 0; l < kLanes; ++l) {
        const float col[3] = {g[0][j][l], g[1][j][l], g[2][j][l]};
        float u[n];
        Ax::filter(col, u);
        for (int i = 0; i < n; ++i) r[i][j][l] = u[i];
      }
    for (int i = 0; i < n; ++i) {  // u = r G^T
      float u[n][kLanes];
      for (int l = 0; l < kLanes; ++l) {
        const float row[3] = {r[i][0][l], r[i][1][l], r[i][2][l]};
        float v[n];
        Ax::filter(row, v);
        for (int j = 0; j < n; ++j) u[j][l] = v[j];
      }
      for (int j = 0; j < n; ++j)
        for (int l = 0; l < lanes; ++l) dst[(n * i + j) * ldxi + (cb - c0 + l) * cs] = u[j][l];
    }
  }
}

// The stride-1 transforms (the contracts WinogradKernels names).
inline void output_run(const float* m, int64_t ldxi, float bias, float* plane, int64_t OH, int64_t OW, int64_t os2,
                       int64_t os3, int64_t ty, int64_t txa, int64_t txb) {
  output_tiles<AxisS1>(m, ldxi, bias, plane, OH, OW, os2, os3, ty, txa, txb);
}
inline void weight_run(const float* w, int64_t c0, int64_t c1, float* dst, int64_t ldxi, int64_t cs) {
  filter_tiles<AxisS1>(w, c0, c1, dst, ldxi, cs);
}

// The product kernels: c (rows ldc apart) = a @ b, a a panel of kPanelRows rows stored column by
// column (a[k * kPanelRows + r]), b a panel of kPanelCols columns stored row by row
// (b[k * kPanelCols + j]), k in [0, K). Each element of c is its products added in k order, one
// FMA each (the AVX2 and AVX-512 copies agree bit for bit), or one multiply and one add in the
// baseline copy.
//
// The wide copies run one register block: kPanelRows rows of a times two vectors of b per k, 12
// accumulators, enough independent FMAs to keep both FMA units busy. V is __m256 (AVX2: the two
// vectors are one panel's two halves) or __m512 (AVX-512: one vector from each of two panels).
// How far ahead of the k loop the kernels prefetch a's panel (2 KiB): a streams from memory when
// the filters are larger than the caches (a model's deep layers at batch 1).
constexpr int64_t kPrefetchFloats = 512;

#if defined(__AVX2__) && defined(__FMA__)
inline __m256 vset1(__m256, float x) { return _mm256_set1_ps(x); }
inline __m256 vload(__m256, const float* p) { return _mm256_loadu_ps(p); }
inline __m256 vfma(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
inline void vstore(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
#endif
#if defined(__AVX512F__)
inline __m512 vset1(__m512, float x) { return _mm512_set1_ps(x); }
inline __m512 vload(__m512, const float* p) { return _mm512_loadu_ps(p); }
inline __m512 vfma(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
inline void vstore(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
#endif

#if defined(__AVX2__) && defined(__FMA__)
// The panel kernels' block: c[r][0..w) and c[r][w..2w) (w = the vector width) for
// r < kPanelRows, a's rows against the vectors at b0 and b1, kPanelCols floats further per k.
template <typename V>
inline void block_rows_x2(const float* a, const float* b0, const float* b1, int64_t K, float* c, int64_t ldc) {
  static_assert(kPanelRows == 6 && kPanelCols == 16, "12 accumulators: 6 rows x 2 vectors");
  constexpr int w = int(sizeof(V) / sizeof(float));
  const V zero = vset1(V{}, 0.0f);
  V c00 = zero, c01 = zero, c10 = zero, c11 = zero, c20 = zero, c21 = zero, c30 = zero, c31 = zero, c40 = zero,
    c41 = zero, c50 = zero, c51 = zero;
  const int64_t w2 = b1 - b0;
  for (int64_t k = 0; k < K; ++k, a += kPanelRows) {
    __builtin_prefetch(a + kPrefetchFloats);
    const float* b = b0 + k * kPanelCols;
    const V x0 = vload(V{}, b), x1 = vload(V{}, b + w2);
    V ar = vset1(V{}, a[0]);
    c00 = vfma(ar, x0, c00), c01 = vfma(ar, x1, c01);
    ar = vset1(V{}, a[1]);
    c10 = vfma(ar, x0, c10), c11 = vfma(ar, x1, c11);
    ar = vset1(V{}, a[2]);
    c20 = vfma(ar, x0, c20), c21 = vfma(ar, x1, c21);
    ar = vset1(V{}, a[3]);
    c30 = vfma(ar, x0, c30), c31 = vfma(ar, x1, c31);
    ar = vset1(V{}, a[4]);
    c40 = vfma(ar, x0, c40), c41 = vfma(ar, x1, c41);
    ar = vset1(V{}, a[5]);
    c50 = vfma(ar, x0, c50), c51 = vfma(ar, x1, c51);
  }
  vstore(c, c00), vstore(c + w, c01), vstore(c + ldc, c10), vstore(c + ldc + w, c11);
  vstore(c + 2 * ldc, c20), vstore(c + 2 * ldc + w, c21), vstore(c + 3 * ldc, c30), vstore(c + 3 * ldc + w, c31);
  vstore(c + 4 * ldc, c40), vstore(c + 4 * ldc + w, c41), vstore(c + 5 * ldc, c50), vstore(c + 5 * ldc + w, c51);
}
#endif

#if defined(__AVX512F__)
// One 16-float register per row: 6 accumulators (panel_product2 and panel_product_rows2, with
// 12, are the fast ones).
inline void panel_product(const float* a, const float* b, int64_t K, float* c, int64_t ldc) {
  __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
  for (int64_t k = 0; k < K; ++k, a += 6, b += 16) {
    const __m512 b0 = _mm512_loadu_ps(b);
    c0 = vfma(vset1(b0, a[0]), b0, c0), c1 = vfma(vset1(b0, a[1]), b0, c1), c2 = vfma(vset1(b0, a[2]), b0, c2);
    c3 = vfma(vset1(b0, a[3]), b0, c3), c4 = vfma(vset1(b0, a[4]), b0, c4), c5 = vfma(vset1(b0, a[5]), b0, c5);
  }
  vstore(c, c0), vstore(c + ldc, c1), vstore(c + 2 * ldc, c2);
  vstore(c + 3 * ldc, c3), vstore(c + 4 * ldc, c4), vstore(c + 5 * ldc, c5);
}

// 6 x 32: a vector from each of two adjacent column panels (the second K * kPanelCols floats on).
inline void panel_product2(const float* a, const float* b, int64_t K, float* c, int64_t ldc) {
  block_rows_x2<__m512>(a, b, b + K * kPanelCols, K, c, ldc);
}

// 12 x 16: two adjacent row panels (the second K * kPanelRows floats on) against one column
// panel: 12 accumulators of one vector each, one b load and 12 broadcasts per k.
inline void panel_product_rows2(const float* a, const float* b, int64_t K, float* c, int64_t ldc) {
  const float* a2 = a + K * kPanelRows;
  __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, d0 = c0, d1 = c0, d2 = c0, d3 = c0,
         d4 = c0, d5 = c0;
  for (int64_t k = 0; k < K; ++k, a += 6, a2 += 6, b += 16) {
    __builtin_prefetch(a + kPrefetchFloats), __builtin_prefetch(a2 + kPrefetchFloats);
    const __m512 b0 = _mm512_loadu_ps(b);
    c0 = vfma(vset1(b0, a[0]), b0, c0), c1 = vfma(vset1(b0, a[1]), b0, c1), c2 = vfma(vset1(b0, a[2]), b0, c2);
    c3 = vfma(vset1(b0, a[3]), b0, c3), c4 = vfma(vset1(b0, a[4]), b0, c4), c5 = vfma(vset1(b0, a[5]), b0, c5);
    d0 = vfma(vset1(b0, a2[0]), b0, d0), d1 = vfma(vset1(b0, a2[1]), b0, d1), d2 = vfma(vset1(b0, a2[2]), b0, d2);
    d3 = vfma(vset1(b0, a2[3]), b0, d3), d4 = vfma(vset1(b0, a2[4]), b0, d4), d5 = vfma(vset1(b0, a2[5]), b0, d5);
  }
  const __m512 rows[12] = {c0, c1, c2, c3, c4, c5, d0, d1, d2, d3, d4, d5};
  for (int r = 0; r < 12; ++r) vstore(c + r * ldc, rows[r]);
}
#else
// c (kPanelRows x kPanelCols) = a @ b: AVX2, one panel as two 8-float halves; else scalar.
inline void panel_product(const float* a, const float* b, int64_t K, float* c, int64_t ldc) {
#if defined(__AVX2__) && defined(__FMA__)
  block_rows_x2<__m256>(a, b, b + 8, K, c, ldc);
#else
  float acc[kPanelRows][kPanelCols] = {};
  for (int64_t k = 0; k < K; ++k, a += kPanelRows, b += kPanelCols)
    for (int r = 0; r < kPanelRows; ++r)
      for (int j = 0; j < kPanelCols; ++j) acc[r][j] += a[r] * b[j];
  for (int r = 0; r < kPanelRows; ++r)
    for (int j = 0; j < kPanelCols; ++j) c[r * ldc + j] = acc[r][j];
#endif
}

// Two panels one after the other: a's panel is read twice, the second time from L1.
inline void panel_product2(const float* a, const float* b, int64_t K, float* c, int64_t ldc) {
  panel_product(a, b, K, c, ldc);
  panel_product(a, b + K * kPanelCols, K, c + kPanelCols, ldc);
}

inline void panel_product_rows2(const float* a, const float* b, int64_t K, float* c, int64_t ldc) {
  panel_product(a, b, K, c, ldc);
  panel_product(a + K * kPanelRows, b, K, c + kPanelRows * ldc, ldc);
}
#endif

}  // namespace bm::cpu::BM_WINO_NS

#include "cpu/conv_direct_kernels.h"
#include "cpu/conv_winograd_grad_kernels.h"
#include "cpu/conv_winograd_s2_kernels.h"

namespace bm::cpu::BM_WINO_NS {

inline const WinogradKernels& kernels() {
  static const WinogradKernels k{weight_run,     input_run,           output_run,    panel_product,
                                 panel_product2, panel_product_rows2, direct_pixels, kDirectChannels,
                                 kDirectPixels,  kDirectPointwise,    channels_last_rows, direct_store_row,
                                 wgrad_input_tiles, wgrad_grad_tiles, weight_run_s2, input_run_s2,
                                 output_run_s2, wgrad_input_tiles_s2, wgrad_grad_tiles_s2};
  return k;
}

}  // namespace bm::cpu::BM_WINO_NS
