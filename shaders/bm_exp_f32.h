// exp for float32 in plain arithmetic, fma and selects, written once in the subset of C++ that is
// also Metal Shading Language: the CPU (csrc/cpu/activation_f32.cpp, softmax_rows.cpp) and the shaders
// (through shaders/activation.h) compute the very same bits, and loops calling it vectorise on the
// CPU (libm's expf is a scalar call). Within 2 ulp of the exact value over the whole range;
// exp(-inf) = 0, exp(inf) = inf, NaN stays NaN, results below the normal range round through the
// subnormals. Multiply-adds are fused exactly where bm_fma says so: fma is correctly rounded on
// every target (an instruction on AVX2, AVX-512, NEON, Metal and CUDA, libm's fmaf on a baseline
// x86-64 copy), so every width gives the same bits; anything else must not be contracted
// (callers compile with fp-contract=off). Hot CPU loops call it only from the AVX2 / AVX-512
// copies, where the fma is one instruction (csrc/cpu/isa.h).
#ifndef BESSEMER_EXP_F32_H
#define BESSEMER_EXP_F32_H

#ifdef __METAL_VERSION__
typedef int bm_i32;
typedef uint bm_u32;
inline bm_i32 bm_float_bits(float x) { return metal::as_type<int>(x); }
inline float bm_bits_float(bm_i32 b) { return metal::as_type<float>(b); }
#else
#include <cstdint>
#include <cstring>
typedef int32_t bm_i32;
typedef uint32_t bm_u32;
inline bm_i32 bm_float_bits(float x) { bm_i32 b; std::memcpy(&b, &x, 4); return b; }
inline float bm_bits_float(bm_i32 b) { float x; std::memcpy(&x, &b, 4); return x; }
#endif

#ifdef __METAL_VERSION__
inline float bm_fma(float a, float b, float c) { return metal::fma(a, b, c); }
inline float bm_fabs(float x) { return metal::fabs(x); }
#else
#include <cmath>
inline float bm_fma(float a, float b, float c) { return std::fma(a, b, c); }
inline float bm_fabs(float x) { return std::fabs(x); }
#endif

// exp's common part: k = round(x / ln2) held in v = 1.5 * 2^23 + k (the 1.5 * 2^23 trick, with no
// float->int conversion of a possible NaN), and exp(r) for r = x - k ln2.
inline float bm_exp_round(float x) { return bm_fma(x, 1.44269504088896341f, 12582912.0f); }
inline bm_i32 bm_exp_k(float v) { return bm_float_bits(v) - bm_float_bits(12582912.0f); }
// r = x - k ln2 in two steps (Cody-Waite): k * 0.693359375 is exact for |k| <= 2^14.
inline float bm_exp_reduce(float x, float v) {
  const float kf = v - 12582912.0f;
  return bm_fma(kf, 2.12194440e-4f, x - kf * 0.693359375f);
}
inline float bm_exp_poly(float x, float v) {
  const float r = bm_exp_reduce(x, v);
  // exp(r) for |r| <= ln2 / 2: 1 + r + r^2 q(r), q of degree 4 fitted for minimax relative error
  // (3e-9, below float32 rounding; the degree-7 Taylor series it replaces cost two more operations
  // for the same 1.2 ulp; degree 5 would give 2.4 ulp).
  float p = 0.0013814538f;
  p = bm_fma(p, r, 0.008368745f);
  p = bm_fma(p, r, 0.04166839f);
  p = bm_fma(p, r, 0.16666521f);
  p = bm_fma(p, r, 0.49999994f);
  p = bm_fma(p, r, 1.0f);
  return bm_fma(p, r, 1.0f);
}

inline float bm_exp_f32(float x) {
  // Clamp to where the result is 0 / inf anyway; comparisons are false for NaN, which passes through.
  // Both tests read x itself: written as a chain (the second testing the first's result), GCC's
  // vector code took nine instructions for the pair instead of four, and exp ran 20% slower.
  const float lo = x < -104.0f ? -104.0f : x;
  const float xc = x > 89.0f ? 89.0f : lo;
  const float v = bm_exp_round(xc);
  const bm_i32 k = bm_exp_k(v);
  const float p = bm_exp_poly(xc, v);
  // Scale by 2^k as 2^k1 * 2^k2 so each factor is a normal float for k in [-150, 128]. For a NaN
  // input k is garbage (the result is NaN through p anyway): the exponent is shifted as unsigned
  // bits, since shifting a negative int left is undefined in C++ (UBSan found it).
  const bm_i32 k1 = k >> 1, k2 = k - k1;
  return p * bm_bits_float(bm_i32(bm_u32(k1 + 127) << 23)) * bm_bits_float(bm_i32(bm_u32(k2 + 127) << 23));
}

// bm_exp_f32's bits where the result is a normal float (x in [-86, 88]: k in [-124, 127], p in
// [0.7, 1.42]), without the clamps and with 2^k put into p's exponent bits by one integer add
// (scaling by 2^k1 then 2^k2 is exact there, so the bits agree: checked for every such float32).
// The CPU loops take it for blocks whose inputs all qualify (csrc/cpu/activation_f32.cpp), and
// formulas whose exp argument stays in range (bm_gelu_mid); shaders call bm_exp_f32.
inline float bm_exp_f32_normal(float x) {
  const float v = bm_exp_round(x);
  return bm_bits_float(bm_float_bits(bm_exp_poly(x, v)) + bm_i32(bm_u32(bm_exp_k(v)) << 23));
}

#endif
