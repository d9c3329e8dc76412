// float32 log1p, expm1, hypot and erfinv: functions MSL does not have, written once in the subset
// of C++ that is also MSL and included by both shaders/unary_math.metal, binary_math.metal and
// csrc/cpu/unary_math.cpp, binary_math.cpp, so the CPU and the simulator compute the same bits
// (float16/bfloat16 compute in float32 and round once). exp, log and sqrt come from
// metal::precise (the simulator and the CPU both call libm; a real GPU may differ by an ulp),
// erf/erfc from shaders/erf.h. Multiply-adds are written as explicit fma or unfused (callers
// compile without contraction).
#ifndef BESSEMER_MATH_F32_H
#define BESSEMER_MATH_F32_H

#include "erf.h"

#ifdef __METAL_VERSION__
inline float bm_log_f(float x) { return metal::precise::log(x); }
inline float bm_exp_f(float x) { return metal::precise::exp(x); }
inline float bm_sqrt_f(float x) { return metal::precise::sqrt(x); }
inline float bm_copysign_f(float x, float s) { return metal::copysign(x, s); }
#else
#include <cmath>
inline float bm_log_f(float x) { return std::log(x); }
inline float bm_exp_f(float x) { return std::exp(x); }
inline float bm_sqrt_f(float x) { return std::sqrt(x); }
inline float bm_copysign_f(float x, float s) { return std::copysign(x, s); }
#endif

// log(1 + x) as log(u) * (x / (u - 1)), u = 1 + x rounded: the factor x / (u - 1) corrects for
// the rounding of u (Goldberg), so small x keep their relative precision. u == 1: x itself
// (keeps -0). u - 1 == u (x >= 2^24, inf): log(u), the correction being below an ulp.
inline float bm_log1p(float x) {
  const float u = 1.0f + x;
  const float d = u - 1.0f;
  const float l = bm_log_f(u);
  return u == 1.0f ? x : (d == u ? l : l * (x / d));  // NaN and x < -1 reach log's NaN
}

// exp(x) - 1 as (u - 1) * (x / log(u)), u = exp(x) rounded (Kahan): log(u) sees the same
// rounding as u - 1, so the two cancel. u == 1: x; u - 1 == -1 (x <= -17): -1; u - 1 == u
// (x >= 17, inf): u, the -1 being below an ulp.
inline float bm_expm1(float x) {
  const float u = bm_exp_f(x);
  const float d = u - 1.0f;
  const float r = d * (x / bm_log_f(u));
  return u == 1.0f ? x : (d == -1.0f ? -1.0f : (d == u ? u : r));  // NaN falls through to r
}

// sqrt(x^2 + y^2) without overflow or underflow: both scaled by a power of two (exact) that puts
// the larger in [2^-50, 2^50] unless it already is, the sum of squares with one rounding (fma),
// one correctly rounded sqrt. Within about 1 ulp. An infinite argument gives inf, even with a
// NaN (IEEE hypot, as torch); otherwise NaN propagates.
inline float bm_hypot(float x, float y) {
  const float a = bm_fabs(x), b = bm_fabs(y);
  const float hi = a > b ? a : b, lo = a > b ? b : a;  // a NaN lands in hi or lo either way
  const float s = hi > 1.12589991e15f ? 8.47032947e-22f : (hi < 8.88178420e-16f ? 1.26765060e30f : 1.0f);
  const float hs = hi * s, ls = lo * s;  // 2^-70 or 2^100: exact scaling (hs below 2^58)
  const float r = bm_sqrt_f(bm_fma(hs, hs, ls * ls)) / s;
  const float kMax = 3.40282347e38f;
  return a > kMax ? a : (b > kMax ? b : r);
}

// erfinv(y) for |y| < 1: a first guess x0 = y * P(w), w = -log((1 - y)(1 + y)) (least-squares
// fits to erfinv(y) / y, relative error below 1.2e-8: P1 in w - 2.5 for w < 5, P2 in sqrt(w) - 3
// above, up to w = 16.6 at |y| = 1 - 2^-24), then one Newton step, on erf(x) = |y| for |y| < 0.5
// and on erfc(x) = 1 - |y| (exact) above, where erf(x) ~ 1 has lost the digits of 1 - |y| that
// decide x. erfinv(+-1) = +-inf (w = inf), |y| > 1 and NaN give NaN (w = NaN), erfinv(-0) = -0.
inline float bm_erfinv(float y) {
  const float a = bm_fabs(y);
  const float w = -bm_log_f((1.0f - a) * (1.0f + a));
  const float t = w - 2.5f;
  float p = -8.941413832e-09f;
  p = bm_fma(p, t, 2.326479986e-08f);
  p = bm_fma(p, t, 4.682669612e-07f);
  p = bm_fma(p, t, -3.463092980e-06f);
  p = bm_fma(p, t, -4.973069736e-06f);
  p = bm_fma(p, t, 2.183458855e-04f);
  p = bm_fma(p, t, -1.252725255e-03f);
  p = bm_fma(p, t, -4.177388269e-03f);
  p = bm_fma(p, t, 2.466402799e-01f);
  p = bm_fma(p, t, 1.501409411e+00f);
  const float s = bm_sqrt_f(w) - 3.0f;
  float q = 1.149725722e-04f;
  q = bm_fma(q, s, -3.100820759e-04f);
  q = bm_fma(q, s, -5.457243969e-05f);
  q = bm_fma(q, s, 1.485671382e-03f);
  q = bm_fma(q, s, -3.599182004e-03f);
  q = bm_fma(q, s, 5.686724558e-03f);
  q = bm_fma(q, s, -7.636804134e-03f);
  q = bm_fma(q, s, 9.445329197e-03f);
  q = bm_fma(q, s, 1.001674891e+00f);
  q = bm_fma(q, s, 2.832976818e+00f);
  const float x0 = a * (w < 5.0f ? p : q);
  // Newton: x1 = x0 - f(x0) / f'(x0), f' = 2 / sqrt(pi) * exp(-x0^2) for both forms.
  const float f = a < 0.5f ? bm_erf(x0) - a : (1.0f - a) - bm_erfc(x0);
  const float x1 = x0 - f / (1.12837917f * bm_exp_neg_sq(x0, 1.0f));
  return bm_copysign_f(a == 1.0f ? w : x1, y);
}

#endif
