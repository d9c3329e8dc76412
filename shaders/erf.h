// erf, erfc and the exact gelu in float32 for shaders. MSL has no erf/erfc (metal::precise offers
// exp, log, tanh... but not these), so bessemer carries its own approximations, fitted by
// tools/fit_erf.py (relative minimax fits against mpmath; the fit error is below 1e-9, so float32
// rounding dominates). Measured over dense grids against mpmath (tests/test_norm.py re-checks the
// gelu bound on the simulator): erf <= 1.3 ulp, erfc <= 2.8 ulp, gelu <= 4 ulp, assuming exp
// within 1 ulp.
//
//   |x| < 0.5   erf(x) = x + x * Q(x^2)                  (x exact, the correction small)
//   z >= 0.5    erfc(z) = exp(-z^2) * R(z), R(z) = exp(z^2) erfc(z) smooth and slowly varying:
//               [0.5, 1.5) and [1.5, 3) polynomials in z - 1 and z - 2.25, [3, inf) P(1/z^2) / z
//               (R's asymptotic form, fitted on [3, 10.1]; beyond that exp(-z^2) underflows).
//   gelu        erfc(|z|) = exp(-z^2) * R(|z|) at every z, with R on [0, 3) one polynomial G in
//               |z| - 1.5 (no erf form: Phi = 1 - erfc / 2 does not cancel) and P above.
// exp(-z^2) takes z^2 as hi + lo (fma) so its rounding does not grow into a 2 z^2 ulp error.
//
// Written once in the subset of C++ that is also MSL and included by both shaders/unary.metal and
// csrc/cpu/activation_f32.cpp, with exp from shaders/bm_exp_f32.h: the CPU and the simulator give
// the same bits. Branch-free where it matters (selects between values computed on every path), so
// CPU loops over it vectorise; fma is correctly rounded everywhere, so its width does not matter.
#ifndef BESSEMER_ERF_H
#define BESSEMER_ERF_H

#include "bm_exp_f32.h"

inline float bm_erf_small(float x) {  // |x| < 0.5
  const float u = x * x;
  float q = -7.65791687e-04f;
  q = bm_fma(q, u, 5.19808987e-03f);
  q = bm_fma(q, u, -2.68626250e-02f);
  q = bm_fma(q, u, 1.12837695e-01f);
  q = bm_fma(q, u, -3.76126379e-01f);
  q = bm_fma(q, u, 1.28379166e-01f);
  return bm_fma(x, q, x);
}

// exp(z^2) * erfc(z) for 0.5 <= z < 3: the two polynomial fits, both evaluated, one selected.
// Split from bm_erfcx so a CPU loop whose block has every z < 3 skips the [3, inf) fit and its two
// divisions (bm_gelu_mid); the selected value is the same either way.
inline float bm_erfcx_mid(float z) {
  const float t1 = z - 1.0f;  // [0.5, 1.5)
  float r1 = -4.05822764e-04f;
  r1 = bm_fma(r1, t1, 1.13733660e-03f);
  r1 = bm_fma(r1, t1, -2.76565691e-03f);
  r1 = bm_fma(r1, t1, 6.95091859e-03f);
  r1 = bm_fma(r1, t1, -1.66618749e-02f);
  r1 = bm_fma(r1, t1, 3.75740118e-02f);
  r1 = bm_fma(r1, t1, -7.92269930e-02f);
  r1 = bm_fma(r1, t1, 1.54371515e-01f);
  r1 = bm_fma(r1, t1, -2.73212016e-01f);
  r1 = bm_fma(r1, t1, 4.27583575e-01f);
  const float t2 = z - 2.25f;  // [1.5, 3)
  float r2 = -8.93137621e-06f;
  r2 = bm_fma(r2, t2, 3.26447589e-05f);
  r2 = bm_fma(r2, t2, -1.02394522e-04f);
  r2 = bm_fma(r2, t2, 3.46888060e-04f);
  r2 = bm_fma(r2, t2, -1.14377122e-03f);
  r2 = bm_fma(r2, t2, 3.61932791e-03f);
  r2 = bm_fma(r2, t2, -1.10020619e-02f);
  r2 = bm_fma(r2, t2, 3.19926031e-02f);
  r2 = bm_fma(r2, t2, -8.84865001e-02f);
  r2 = bm_fma(r2, t2, 2.31087252e-01f);
  return z < 1.5f ? r1 : r2;
}

// exp(z^2) * erfc(z) for z >= 3 (0 once z * z overflows: R -> 1 / (sqrt(pi) z)).
inline float bm_erfcx_tail(float z) {
  const float w = 1.0f / (z * z);
  float p = 1.32068939e+01f;
  p = bm_fma(p, w, -8.65787411e+00f);
  p = bm_fma(p, w, 3.15941381e+00f);
  p = bm_fma(p, w, -1.03522956e+00f);
  p = bm_fma(p, w, 4.22604948e-01f);
  p = bm_fma(p, w, -2.82088369e-01f);
  p = bm_fma(p, w, 5.64189553e-01f);
  return p / z;
}

// exp(z^2) * erfc(z) for z >= 0.5 (NaN stays NaN). All three fits are evaluated and one selected.
inline float bm_erfcx(float z) { return z < 3.0f ? bm_erfcx_mid(z) : bm_erfcx_tail(z); }

// exp(z^2) * erfc(z) for 0 <= z < 3 in one polynomial in z - 1.5 (degree 15, fit error 1.2e-9): gelu's
// fit. It needs neither erf's small-|z| form nor a choice between R1 and R2, which a vector loop
// evaluates all of: gelu runs 20% faster than with those, within the same 4 ulp.
inline float bm_erfcx_gelu_low(float z) {
  const float t = z - 1.5f;
  float g = -8.03725300e-08f;
  g = bm_fma(g, t, 3.27507507e-07f);
  g = bm_fma(g, t, -4.88660191e-07f);
  g = bm_fma(g, t, 1.42576539e-06f);
  g = bm_fma(g, t, -7.10679251e-06f);
  g = bm_fma(g, t, 2.41229118e-05f);
  g = bm_fma(g, t, -7.26407889e-05f);
  g = bm_fma(g, t, 2.21978029e-04f);
  g = bm_fma(g, t, -6.61830883e-04f);
  g = bm_fma(g, t, 1.88688724e-03f);
  g = bm_fma(g, t, -5.14603965e-03f);
  g = bm_fma(g, t, 1.33771356e-02f);
  g = bm_fma(g, t, -3.29308845e-02f);
  g = bm_fma(g, t, 7.61510581e-02f);
  g = bm_fma(g, t, -1.63622916e-01f);
  return bm_fma(g, t, 3.21585417e-01f);
}

// exp(z^2) * erfc(z) for z >= 0 as gelu and its derivative take it: G below 3, P above.
inline float bm_erfcx_gelu(float z) { return z < 3.0f ? bm_erfcx_gelu_low(z) : bm_erfcx_tail(z); }

// exp(-s * x^2) for s = 1 or 0.5 (a power of two keeps s * hi exact), x^2 = hi + lo, from
// e = exp(-s * hi).
inline float bm_exp_neg_sq_from(float e, float x, float hi, float s) {
  const float lo = bm_fma(x, x, -hi);
  return e == 0.0f ? e : bm_fma(-e, s * lo, e);  // e * (1 - s lo); x = inf gives lo = NaN
}
inline float bm_exp_neg_sq(float x, float s) {
  const float hi = x * x;
  return bm_exp_neg_sq_from(bm_exp_f32(-s * hi), x, hi, s);
}
// The same bits where s * x^2 <= 86 (bm_exp_f32_normal's range, where e is never 0: no test).
inline float bm_exp_neg_sq_normal(float x, float s) {
  const float hi = x * x;
  const float e = bm_exp_f32_normal(-s * hi);
  return bm_fma(-e, s * bm_fma(x, x, -hi), e);
}

inline float bm_erfc_large(float z) { return bm_exp_neg_sq(z, 1.0f) * bm_erfcx(z); }  // z >= 0.5

inline float bm_erf(float x) {
  const float a = bm_fabs(x);
  if (a < 0.5f) return bm_erf_small(x);
  const float r = 1.0f - bm_erfc_large(a);
  return x < 0.0f ? -r : r;  // NaN falls through here and stays NaN
}

inline float bm_erfc(float x) {
  if (x >= 0.5f) return bm_erfc_large(x);
  if (x > -0.5f) return 1.0f - bm_erf_small(x);
  return 2.0f - bm_erfc_large(-x);  // NaN included
}

// gelu(x) = x * Phi(x), Phi(x) = erfc(-x / sqrt2) / 2 = erfc(|z|) / 2 for x < 0 and 1 - erfc(|z|) / 2
// for x >= 0: no cancellation on either side (erfc(|z|) <= 1). For x < 0, exp(-z^2) = exp(-x^2 / 2)
// is taken from x itself, not from the rounded z. Branch-free: one erfcx(|z|) (cx) and one exp
// serve both signs.
inline float bm_gelu_from(float x, float z, float cx, bool normal_exp) {
  const bool pos = z >= 0.0f;
  const float w = pos ? z : x, s = pos ? 1.0f : 0.5f;
  const float tail = (normal_exp ? bm_exp_neg_sq_normal(w, s) : bm_exp_neg_sq(w, s)) * cx;  // erfc(|z|)
  return pos ? x * (1.0f - 0.5f * tail) : (0.5f * x) * tail;  // NaN lands in the second
}

inline float bm_gelu(float x) {
  const float z = x * 0.707106781f;
  return bm_gelu_from(x, z, bm_erfcx_gelu(bm_fabs(z)), false);
}

// bm_gelu's bits for x with |x / sqrt2| < 3 (not NaN), without the [3, inf)
// fit and its two divisions, and with exp's normal-range form (its argument is -z^2 > -9): CPU
// loops take it for blocks where every element qualifies (nearly all, for typical data).
inline float bm_gelu_mid(float x) {
  const float z = x * 0.707106781f;
  return bm_gelu_from(x, z, bm_erfcx_gelu_low(bm_fabs(z)), true);
}

#endif
