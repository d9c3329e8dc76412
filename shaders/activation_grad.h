// float32 derivatives of silu, gelu and gelu_tanh (torch's formulas, in forms that do not cancel),
// written once in the subset of C++ that is also MSL, like activation.h: included by
// shaders/binary.metal (gelu_backward & co.) and csrc/cpu/act_backward.cpp, so the CPU and the
// simulator compute the same bits. Multiply-adds are written unfused and must be compiled without
// contraction (fp-contract=off).
#ifndef BESSEMER_ACTIVATION_GRAD_H
#define BESSEMER_ACTIVATION_GRAD_H

#include "activation.h"

// silu'(x) = s (1 + x (1 - s)), s = sigmoid(x); 1 - s = sigmoid(-x) comes from the same
// exp(-|x|), so it keeps its relative precision where s rounds to 1.
inline float bm_silu_grad_from(float x, float e) {  // e = exp(-|x|)
  const float r = 1.0f / (1.0f + e);
  const float s = x >= 0.0f ? r : e * r;
  const float sm = x >= 0.0f ? e * r : r;
  return s * (1.0f + x * sm);
}
inline float bm_silu_grad(float x) { return bm_silu_grad_from(x, bm_exp_f32(-bm_fabs(x))); }
// The same bits for |x| <= 86 (exp's normal-range form): CPU loops take it for whole blocks.
inline float bm_silu_grad_normal(float x) { return bm_silu_grad_from(x, bm_exp_f32_normal(-bm_fabs(x))); }

// gelu'(x) = Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi). Phi as in bm_gelu:
// erfc(|z|) = exp(-z^2) erfcx(|z|) with gelu's fit (1 - erfc / 2 for x >= 0, no cancellation for
// x < 0), exp(-z^2) = exp(-x^2 / 2) taken from x itself, the same value phi needs.
inline float bm_gelu_grad_from(float x, float z, float e, float cx) {  // e = exp(-x^2 / 2), cx = erfcx(|z|)
  const float tail = e * cx;  // erfc(|z|)
  const float cdf = z >= 0.0f ? 1.0f - 0.5f * tail : 0.5f * tail;  // NaN: the second
  return cdf + x * (0.398942280f * e);
}
inline float bm_gelu_grad(float x) {
  const float z = x * 0.707106781f;
  return bm_gelu_grad_from(x, z, bm_exp_neg_sq(x, 0.5f), bm_erfcx_gelu(bm_fabs(z)));
}
// The same bits for |x / sqrt2| < 3 (gelu's fit below 3, exp's normal-range form), as bm_gelu_mid.
inline float bm_gelu_grad_mid(float x) {
  const float z = x * 0.707106781f;
  return bm_gelu_grad_from(x, z, bm_exp_neg_sq_normal(x, 0.5f), bm_erfcx_gelu_low(bm_fabs(z)));
}

// gelu_tanh'(x): torch's 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) u', u = sqrt(2/pi) (x + 0.044715 x^3),
// rewritten with s = sigmoid(2u) = (1 + tanh u) / 2 and 1 - tanh^2 u = 4 s (1 - s):
// s + x s (1 - s) 2u', 2u' = 2 sqrt(2/pi) (1 + 3 * 0.044715 x^2). s and 1 - s come from one
// exp(-|2u|) as in bm_sigmoid; once s (1 - s) underflows to 0 the second term is 0 (x 2u' may
// overflow there), NaN keeps its way through s.
inline float bm_gelu_tanh_grad_from(float x, float u2, float e) {  // e = exp(-|u2|)
  const float r = 1.0f / (1.0f + e);
  const float s = u2 >= 0.0f ? r : e * r;
  const float sm = u2 >= 0.0f ? e * r : r;
  const float q = s * sm;
  const float du2 = 1.59576912f * (1.0f + 0.134145f * x * x);
  return q > 0.0f ? s + q * (x * du2) : s;
}
inline float bm_gelu_tanh_grad(float x) {
  const float u2 = 1.59576912f * (x + 0.044715f * x * x * x);
  return bm_gelu_tanh_grad_from(x, u2, bm_exp_f32(-bm_fabs(u2)));
}
// The same bits where |u2| <= 86 (|x| <= 9 gives |u2| < 67): exp's normal-range form.
inline float bm_gelu_tanh_grad_normal(float x) {
  const float u2 = 1.59576912f * (x + 0.044715f * x * x * x);
  return bm_gelu_tanh_grad_from(x, u2, bm_exp_f32_normal(-bm_fabs(u2)));
}

#endif
