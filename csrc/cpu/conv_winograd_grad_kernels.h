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

// B^T d of one axis of an input tile, d[0 .. n) into v[0 .. n): stride 1, Lavin and Gray's B^T,
// (d0 - d2, d1 + d2, d2 - d1, d1 - d3), tiles 2 pixels apart; stride 2 (conv_winograd_s2_kernels.h),
// (d0 - d2, d2, d4 - d2, d1, d3), tiles 4 pixels apart.
struct InputAxisS1 {
  static constexpr int n = 4, step = 2;
  static void apply(const float* d, float* v) {
    v[0] = d[0] - d[2], v[1] = d[1] + d[2], v[2] = d[2] - d[1], v[3] = d[1] - d[3];
  }
};
struct InputAxisS2 {
  static constexpr int n = 5, step = 4;
  static void apply(const float* d, float* v) {
    v[0] = d[0] - d[2], v[1] = d[2], v[2] = d[4] - d[2], v[3] = d[1], v[4] = d[3];
  }
};

// B^T d B (Ax: one axis's B^T, n x n elements) for `tiles` tiles side by side along a tile row. x:
// tile 0's top-left pixel of a channels-last copy (pixels Cp floats apart, rows rs apart; tile i
// starts Ax::step i pixels on). Element xi of tile i, channel c, goes to dst[xi * ldxi + i * Cp + c].
template <typename Ax>
inline void input_tiles(const float* x, int64_t rs, int64_t Cp, int64_t tiles, float* dst, int64_t ldxi) {
  constexpr int L = kGradLanes, n = Ax::n;
  for (int64_t i = 0; i < tiles; ++i) {
    const float* p = x + Ax::step * i * Cp;
    float* o = dst + i * Cp;
    for (int64_t c0 = 0; c0 < Cp; c0 += L) {
      float t[n][n][L];  // t = B^T d along the rows (columns j of the tile)
      for (int j = 0; j < n; ++j) {
        const float* d0 = p + j * Cp + c0;
        for (int l = 0; l < L; ++l) {
          float d[n], v[n];
          for (int u = 0; u < n; ++u) d[u] = d0[u * rs + l];
          Ax::apply(d, v);
          for (int k = 0; k < n; ++k) t[k][j][l] = v[k];
        }
      }
      for (int r = 0; r < n; ++r) {  // v = t B along the columns
        float* q = o + n * r * ldxi + c0;
        for (int l = 0; l < L; ++l) {
          float d[n], v[n];
          for (int u = 0; u < n; ++u) d[u] = t[r][u][l];
          Ax::apply(d, v);
          for (int k = 0; k < n; ++k) q[k * ldxi + l] = v[k];
        }
      }
    }
  }
}
inline void wgrad_input_tiles(const float* x, int64_t rs, int64_t Cp, int64_t tiles, float* dst, int64_t ldxi) {
  input_tiles<InputAxisS1>(x, rs, Cp, tiles, dst, ldxi);
}
inline void wgrad_input_tiles_s2(const float* x, int64_t rs, int64_t Cp, int64_t tiles, float* dst, int64_t ldxi) {
  input_tiles<InputAxisS2>(x, rs, Cp, tiles, dst, ldxi);
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
