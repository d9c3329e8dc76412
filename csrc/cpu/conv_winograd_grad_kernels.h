// The transforms of the Winograd weight gradient (conv_winograd_backward.cpp), written
// once and compiled with the other Winograd kernels for each instruction set
// (conv_winograd_kernels.h includes it inside its namespace BM_WINO_NS). Unlike the forward
// transforms (tiles in the vector), these put 16 channels in the vector: they read channels-last
// copies, so each of a tile's pixels is one 16-float load, and they write the layouts the direct
// kernel multiplies (conv_direct_kernels.h) with no shuffles. Only adds and subtracts, in the same
// order on every instruction set: the same bits.
//
// With d a 4x4 input tile and e the 2x2 tile of grad_output over it, tile t adds
//   (B^T d B) . (A e A^T)
// to the gradient of U = G g G^T (Lavin and Gray's B, A and G, as in the forward pass).
#pragma once
#include <cstdint>

namespace bm::cpu::BM_WINO_NS {

constexpr int kGradLanes = 16;  // channels per vector of the transforms (Cp and Op are multiples)

// B^T d B for `tiles` tiles side by side along a tile row. x: tile 0's top-left pixel of a
// channels-last copy (pixels Cp floats apart, rows rs apart; tile i starts 2 i pixels on).
// Element xi of tile i, channel c, goes to dst[xi * ldxi + i * Cp + c].
inline void wgrad_input_tiles(const float* x, int64_t rs, int64_t Cp, int64_t tiles, float* dst, int64_t ldxi) {
  constexpr int L = kGradLanes;
  for (int64_t i = 0; i < tiles; ++i) {
    const float* p = x + 2 * i * Cp;
    float* o = dst + i * Cp;
    for (int64_t c0 = 0; c0 < Cp; c0 += L) {
      float t[4][4][L];  // t = B^T d along the rows (columns j of the tile)
      for (int j = 0; j < 4; ++j) {
        const float* d0 = p + j * Cp + c0;
        for (int l = 0; l < L; ++l) {
          const float a = d0[l], b = d0[rs + l], c = d0[2 * rs + l], e = d0[3 * rs + l];
          t[0][j][l] = a - c;
          t[1][j][l] = b + c;
          t[2][j][l] = c - b;
          t[3][j][l] = b - e;
        }
      }
      for (int r = 0; r < 4; ++r) {  // v = t B along the columns
        float* q = o + 4 * r * ldxi + c0;
        for (int l = 0; l < L; ++l) {
          q[l] = t[r][0][l] - t[r][2][l];
          q[ldxi + l] = t[r][1][l] + t[r][2][l];
          q[2 * ldxi + l] = t[r][2][l] - t[r][1][l];
          q[3 * ldxi + l] = t[r][1][l] - t[r][3][l];
        }
      }
    }
  }
}

// The same at stride 2 (conv_winograd_s2_kernels.h's transforms): the 5x5 input tile i starts
// 4 i pixels on, B^T d = (d0 - d2, d2, d4 - d2, d1, d3) along both axes; 25 elements a tile.
inline void wgrad_input_tiles_s2(const float* x, int64_t rs, int64_t Cp, int64_t tiles, float* dst, int64_t ldxi) {
  constexpr int L = kGradLanes;
  for (int64_t i = 0; i < tiles; ++i) {
    const float* p = x + 4 * i * Cp;
    float* o = dst + i * Cp;
    for (int64_t c0 = 0; c0 < Cp; c0 += L) {
      float t[5][5][L];  // t = B^T d along the rows (columns j of the tile)
      for (int j = 0; j < 5; ++j) {
        const float* d0 = p + j * Cp + c0;
        for (int l = 0; l < L; ++l) {
          const float a = d0[l], b = d0[rs + l], c = d0[2 * rs + l], d = d0[3 * rs + l], e = d0[4 * rs + l];
          t[0][j][l] = a - c;
          t[1][j][l] = c;
          t[2][j][l] = e - c;
          t[3][j][l] = b;
          t[4][j][l] = d;
        }
      }
      for (int r = 0; r < 5; ++r) {  // v = t B along the columns
        float* q = o + 5 * r * ldxi + c0;
        for (int l = 0; l < L; ++l) {
          q[l] = t[r][0][l] - t[r][2][l];
          q[ldxi + l] = t[r][2][l];
          q[2 * ldxi + l] = t[r][4][l] - t[r][2][l];
          q[3 * ldxi + l] = t[r][1][l];
          q[4 * ldxi + l] = t[r][3][l];
        }
      }
    }
  }
}

// A e of one axis of a 2x2 grad_output tile, (a, b) = (e0, e1), into v[0 .. n): stride 1, Lavin
// and Gray's A, (e0, e0 + e1, e0 - e1, -e1); stride 2, (e0, e0 + e1, e1, e0, e1) (the transpose of
// the forward's A^T m = (m0 + m1 + m3, m1 + m2 + m4)), whose elements 3 and 4 repeat 0 and 2: only
// the 3 distinct ones (kWgradSlotS2, conv_winograd.h, says where the products read each of the 5).
// Storing all 25 of a tile made that transform a sixth of the gradient's time.
struct GradAxisS1 {
  static constexpr int n = 4;
  static void apply(float a, float b, float* v) { v[0] = a, v[1] = a + b, v[2] = a - b, v[3] = -b; }
};
struct GradAxisS2 {
  static constexpr int n = 3;
  static void apply(float a, float b, float* v) { v[0] = a, v[1] = a + b, v[2] = b; }
};

// A e A^T (Ax: one axis's A e, n x n elements) for `tiles` tiles side by side along a tile row of
// grad_output. gy: tile 0's top-left pixel of a channels-last copy (pixels Op floats apart, rows rs
// apart; tile i starts 2 i pixels on). Element xi of tile i, channel o, goes to dst[xi * ldxi +
// (o / cb) * obs + i * cb + o % cb]: blocks of cb channels (the direct kernel's vectors), each a
// run of tiles.
template <typename Ax>
inline void grad_tiles(const float* gy, int64_t rs, int64_t Op, int64_t tiles, float* dst, int64_t ldxi, int64_t obs,
                       int64_t cb) {
  constexpr int L = kGradLanes, n = Ax::n;
  for (int64_t i = 0; i < tiles; ++i) {
    const float* p = gy + 2 * i * Op;
    for (int64_t o0 = 0; o0 < Op; o0 += L) {
      float t[n][2][L];  // t = A e along the rows
      for (int j = 0; j < 2; ++j) {
        const float* e0 = p + j * Op + o0;
        for (int l = 0; l < L; ++l) {
          float v[n];
          Ax::apply(e0[l], e0[rs + l], v);
          for (int k = 0; k < n; ++k) t[k][j][l] = v[k];
        }
      }
      float* o = dst + (o0 / cb) * obs + i * cb + o0 % cb;
      for (int r = 0; r < n; ++r) {  // t A^T along the columns
        float* q = o + n * r * ldxi;
        for (int l = 0; l < L; ++l) {
          float v[n];
          Ax::apply(t[r][0][l], t[r][1][l], v);
          for (int k = 0; k < n; ++k) q[k * ldxi + l] = v[k];
        }
      }
    }
  }
}
inline void wgrad_grad_tiles(const float* gy, int64_t rs, int64_t Op, int64_t tiles, float* dst, int64_t ldxi,
                             int64_t obs, int64_t cb) {
  grad_tiles<GradAxisS1>(gy, rs, Op, tiles, dst, ldxi, obs, cb);
}
// At stride 2: the 3 x 3 distinct elements, (u, v) as xi = 3 u + v of the layout above.
inline void wgrad_grad_tiles_s2(const float* gy, int64_t rs, int64_t Op, int64_t tiles, float* dst, int64_t ldxi,
                                int64_t obs, int64_t cb) {
  grad_tiles<GradAxisS2>(gy, rs, Op, tiles, dst, ldxi, obs, cb);
}

}  // namespace bm::cpu::BM_WINO_NS
