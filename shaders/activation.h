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
inline float bm_sigmoid(float x) {
  const float e = bm_exp_f32(-bm_fabs(x));
  const float r = 1.0f / (1.0f + e);
  return x >= 0.0f ? r : e * r;
}

// silu(x) = x * sigmoid(x), with the stable sigmoid above (no overflow for x << 0).
inline float bm_silu(float x) { return x * bm_sigmoid(x); }

// The tanh approximation x/2 * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 x^3), computed as the
// identical x * sigmoid(2u), whose stable form does not cancel for x < 0.
inline float bm_gelu_tanh(float x) { return x * bm_sigmoid(1.59576912f * (x + 0.044715f * x * x * x)); }

// tanh(x) = sign(x) (1 - e) / (1 + e), e = exp(-2|x|), for |x| >= 0.625, where 1 - e >= 0.71 does
// not cancel; below, x + x^3 q(x^2), q a least-squares fit to (tanh(x) - x) / x^3 (0.8 ulp in
// float32). Within 3 ulp everywhere; tanh(+-inf) = +-1, NaN stays NaN, tanh(-0) = -0.
inline float bm_tanh(float x) {
  const float a = bm_fabs(x);
  const float u = x * x;
  float q = 0.002138226293027401f;
  q = bm_fma(q, u, -0.008171788416802883f);
  q = bm_fma(q, u, 0.021698210388422012f);
  q = bm_fma(q, u, -0.053946252912282944f);
  q = bm_fma(q, u, 0.1333320140838623f);
  q = bm_fma(q, u, -0.3333333134651184f);
  const float small = bm_fma(x, u * q, x);
  const float e = bm_exp_f32(-2.0f * a);
  const float big = (1.0f - e) / (1.0f + e);
  // x == 0 returns x itself: x + x * (u q) would turn -0 into +0.
  return a < 0.625f ? (x == 0.0f ? x : small) : (x < 0.0f ? -big : big);  // NaN: big is NaN
}

#endif
