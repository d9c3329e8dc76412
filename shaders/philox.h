// Philox4x32-10 and the bits -> float maps, written once in the subset of C++ that is also Metal
// Shading Language, and included by both csrc/cpu/random.cpp and shaders/random.metal. One formula
// on every backend is what makes the same seed give the same bits on CPU and GPU.
//
// Counter layout: element i of a draw uses block (offset + i / 4) as the 128-bit counter
// {lo32(block), hi32(block), 0, 0} and word i % 4 of the output; the key is the 64-bit seed
// {lo32(seed), hi32(seed)}.
#ifndef BESSEMER_PHILOX_H
#define BESSEMER_PHILOX_H

#ifdef __METAL_VERSION__
#define BM_PHILOX_FN inline
typedef uint bm_u32;
typedef ulong bm_u64;
inline bm_u32 bm_mulhi(bm_u32 a, bm_u32 b) { return metal::mulhi(a, b); }
#else
#include <cmath>
#include <cstdint>
#define BM_PHILOX_FN inline
typedef uint32_t bm_u32;
typedef uint64_t bm_u64;
inline bm_u32 bm_mulhi(bm_u32 a, bm_u32 b) { return bm_u32((bm_u64(a) * bm_u64(b)) >> 32); }
#endif

struct bm_philox_out {
  bm_u32 v[4];
};

BM_PHILOX_FN bm_philox_out bm_philox4x32_10(bm_u32 c0, bm_u32 c1, bm_u32 c2, bm_u32 c3, bm_u32 k0, bm_u32 k1) {
  const bm_u32 M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += W0;
      k1 += W1;
    }
    bm_u32 hi0 = bm_mulhi(M0, c0), lo0 = M0 * c0;
    bm_u32 hi1 = bm_mulhi(M1, c2), lo1 = M1 * c2;
    bm_u32 n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  bm_philox_out r;
  r.v[0] = c0;
  r.v[1] = c1;
  r.v[2] = c2;
  r.v[3] = c3;
  return r;
}

// The four words for `block` under `seed`.
BM_PHILOX_FN bm_philox_out bm_philox_block(bm_u64 seed, bm_u64 block) {
  return bm_philox4x32_10(bm_u32(block), bm_u32(block >> 32), 0u, 0u, bm_u32(seed), bm_u32(seed >> 32));
}

// Uniform floats in [0, 1) from the top bits of a word: exact integer * power of two, so every
// backend produces the same value, and never 1.0 after rounding to the target type.
BM_PHILOX_FN float bm_uniform_f32(bm_u32 w) { return float(w >> 8) * 5.9604644775390625e-08f; }      // 24 bits * 2^-24
BM_PHILOX_FN float bm_uniform_f16_exact(bm_u32 w) { return float(w >> 21) * 4.8828125e-04f; }   // 11 bits * 2^-11
BM_PHILOX_FN float bm_uniform_bf16_exact(bm_u32 w) { return float(w >> 24) * 3.90625e-03f; }    // 8 bits * 2^-8

// Box-Muller on words (w0, w1) of a block: the cos branch for even lanes, sin for odd ones. u1 is in
// (0, 1] so log never sees 0.
#ifdef __METAL_VERSION__
#define BM_PRECISE metal::precise
#else
#define BM_PRECISE std
#endif
BM_PHILOX_FN float bm_normal_f32(bm_u32 w0, bm_u32 w1, bool odd_lane) {
  float u1 = float((w0 >> 8) + 1u) * 5.9604644775390625e-08f;
  float u2 = float(w1 >> 8) * 5.9604644775390625e-08f;
  float r = BM_PRECISE::sqrt(-2.0f * BM_PRECISE::log(u1));
  float theta = 6.28318530717958647692f * u2;
  return odd_lane ? r * BM_PRECISE::sin(theta) : r * BM_PRECISE::cos(theta);
}

// randint's offset from low for element i of a draw: its bits modulo range (op_table.h's randint
// row). A range of at most 2**32 uses word i % 4 of block first + i / 4; a wider one the 64 bits of
// words (2 * (i % 2), 2 * (i % 2) + 1) of block first + i / 2, the first word high.
BM_PHILOX_FN bm_u64 bm_randint_offset(bm_u64 seed, bm_u64 first, bm_u64 i, bm_u64 range, bool wide) {
  if (!wide) return bm_u64(bm_philox_block(seed, first + i / 4).v[i % 4]) % range;
  bm_philox_out r = bm_philox_block(seed, first + i / 2);
  int w = int(i % 2) * 2;
  return ((bm_u64(r.v[w]) << 32) | bm_u64(r.v[w + 1])) % range;
}

#endif  // BESSEMER_PHILOX_H
