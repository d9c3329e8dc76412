// float32 tanh, sigmoid and the activations silu, gelu (shaders/erf.h), gelu_tanh, written once in
// the subset of C++ that is also MSL and included by both shaders/unary.metal and
// csrc/cpu/activation_f32.cpp: the CPU and the simulator compute the same bits. Plain arithmetic,
// fma and selects (exp from shaders/bm_exp_f32.h, no libm call), so CPU loops over them vectorise.
// A multiply-add is fused only where bm_fma says so (correctly rounded at every width); the rest
// must be compiled without contraction (fp-contract=off).
#ifndef BESSEMER_ACTIVATION_H
#define BESSEMER_ACTIVATION_H

#include "bm_exp_f32.h"
#include "erf.h"

// exp of -|x| never overflows, and for x < 0 the result e/(1+e) keeps its relative precision
// (1/(1+exp(-x)) would round tiny results to 0 and overflow exp for x << 0).
inline float bm_sigmoid_from(float x, float e) {  // e = exp(-|x|)
  const float r = 1.0f / (1.0f + e);
  return x >= 0.0f ? r : e * r;
}
inline float bm_sigmoid(float x) { return bm_sigmoid_from(x, bm_exp_f32(-bm_fabs(x))); }
// The same bits for |x| <= 86 (bm_exp_f32_normal's range): CPU loops take it for blocks where
// every element qualifies.
inline float bm_sigmoid_normal(float x) { return bm_sigmoid_from(x, bm_exp_f32_normal(-bm_fabs(x))); }

// silu(x) = x * sigmoid(x), with the stable sigmoid above (no overflow for x << 0).
inline float bm_silu(float x) { return x * bm_sigmoid(x); }
inline float bm_silu_normal(float x) { return x * bm_sigmoid_normal(x); }

// The tanh approximation x/2 * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 x^3), computed as the
// identical x * sigmoid(2u), whose stable form does not cancel for x < 0.
inline float bm_gelu_tanh(float x) { return x * bm_sigmoid(1.59576912f * (x + 0.044715f * x * x * x)); }
// The same bits for |x| <= 9 (|2u| < 67, exp's normal-range form).
inline float bm_gelu_tanh_normal(float x) { return x * bm_sigmoid_normal(1.59576912f * (x + 0.044715f * x * x * x)); }

// tanh(|x|) = e / (e + 2), e = expm1(2|x|), the sign of x put back on the result (so tanh(-0) = -0).
// expm1 keeps its relative precision at small arguments, so one form serves every x, with no
// branch to select between (the earlier form took both a polynomial for |x| < 0.625 and
// (1 - exp(-2|x|)) / (1 + exp(-2|x|)) for every element, twice the work of this one). |x| is
// clamped at 9.02, beyond which tanh rounds to 1. expm1(y) = 2^k (expm1(r) + 1) - 1 with
// y = k ln2 + r, |r| <= ln2 / 2 (k <= 27, so 2^k is one normal float and 2^k - 1 exact), and
// expm1(r) = r + r^2 (1/2 + r P(r)), P of degree 4 fitted for minimax relative error (tools/fit_tanh.py;
// fit error 0.007 ulp). On positive e the rounding of e and of e + 2 is not amplified (on negative e,
// near -1, it would be doubled: hence |x|). Within 2.5 ulp of the exact value for every float32
// (checked exhaustively; the largest errors sit at small x, where e + 2 rounds at 2^-23 relative);
// tanh(+-inf) = +-1, NaN stays NaN.
inline float bm_tanh(float x) {
  const float a = bm_fabs(x);
  const float y = 2.0f * (a > 9.02f ? 9.02f : a);  // NaN passes the comparison
  // y = k ln2 + r with exp's reduction (bm_exp_f32.h)
  const float v = bm_exp_round(y);
  const bm_i32 k = bm_exp_k(v);
  const float r = bm_exp_reduce(y, v);
  float p = 0.00019824107585009187f;
  p = bm_fma(p, r, 0.0013933288864791393f);
  p = bm_fma(p, r, 0.0083334194496274f);
  p = bm_fma(p, r, 0.041666481643915176f);
  p = bm_fma(p, r, 0.1666666567325592f);
  p = bm_fma(p, r, 0.5f);
  const float em1 = bm_fma(r * r, p, r);
  const float s = bm_bits_float(bm_i32(bm_u32(k + 127) << 23));  // 2^k; a NaN's k is garbage, e is NaN
  const float e = bm_fma(s, em1, s - 1.0f);
  const float t = e / (e + 2.0f);
  return bm_bits_float(bm_float_bits(t) ^ (bm_float_bits(x) & bm_float_bits(-0.0f)));
}

#endif
