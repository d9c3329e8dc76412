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
// exp(-z^2) takes z^2 as hi + lo (fma) so its rounding does not grow into a 2 z^2 ulp error.
#pragma once

inline float bm_erf_small(float x) {  // |x| < 0.5
  const float u = x * x;
  float q = -7.65791687e-04f;
  q = metal::fma(q, u, 5.19808987e-03f);
  q = metal::fma(q, u, -2.68626250e-02f);
  q = metal::fma(q, u, 1.12837695e-01f);
  q = metal::fma(q, u, -3.76126379e-01f);
  q = metal::fma(q, u, 1.28379166e-01f);
  return metal::fma(x, q, x);
}

// exp(z^2) * erfc(z) for z >= 0.5 (NaN stays NaN).
inline float bm_erfcx(float z) {
  if (z < 1.5f) {
    const float t = z - 1.0f;
    float r = -4.05822764e-04f;
    r = metal::fma(r, t, 1.13733660e-03f);
    r = metal::fma(r, t, -2.76565691e-03f);
    r = metal::fma(r, t, 6.95091859e-03f);
    r = metal::fma(r, t, -1.66618749e-02f);
    r = metal::fma(r, t, 3.75740118e-02f);
    r = metal::fma(r, t, -7.92269930e-02f);
    r = metal::fma(r, t, 1.54371515e-01f);
    r = metal::fma(r, t, -2.73212016e-01f);
    return metal::fma(r, t, 4.27583575e-01f);
  }
  if (z < 3.0f) {
    const float t = z - 2.25f;
    float r = -8.93137621e-06f;
    r = metal::fma(r, t, 3.26447589e-05f);
    r = metal::fma(r, t, -1.02394522e-04f);
    r = metal::fma(r, t, 3.46888060e-04f);
    r = metal::fma(r, t, -1.14377122e-03f);
    r = metal::fma(r, t, 3.61932791e-03f);
    r = metal::fma(r, t, -1.10020619e-02f);
    r = metal::fma(r, t, 3.19926031e-02f);
    r = metal::fma(r, t, -8.84865001e-02f);
    return metal::fma(r, t, 2.31087252e-01f);
  }
  const float w = 1.0f / (z * z);  // 0 once z * z overflows: R -> 1 / (sqrt(pi) z)
  float p = 1.32068939e+01f;
  p = metal::fma(p, w, -8.65787411e+00f);
  p = metal::fma(p, w, 3.15941381e+00f);
  p = metal::fma(p, w, -1.03522956e+00f);
  p = metal::fma(p, w, 4.22604948e-01f);
  p = metal::fma(p, w, -2.82088369e-01f);
  p = metal::fma(p, w, 5.64189553e-01f);
  return p / z;
}

// exp(-s * x^2) for s = 1 or 0.5 (a power of two keeps s * hi exact), x^2 = hi + lo.
inline float bm_exp_neg_sq(float x, float s) {
  const float hi = x * x;
  const float lo = metal::fma(x, x, -hi);
  const float e = metal::precise::exp(-s * hi);
  return e == 0.0f ? e : metal::fma(-e, s * lo, e);  // e * (1 - s lo); x = inf gives lo = NaN
}

inline float bm_erfc_large(float z) { return bm_exp_neg_sq(z, 1.0f) * bm_erfcx(z); }  // z >= 0.5

inline float bm_erf(float x) {
  const float a = metal::fabs(x);
  if (a < 0.5f) return bm_erf_small(x);
  const float r = 1.0f - bm_erfc_large(a);
  return x < 0.0f ? -r : r;  // NaN falls through here and stays NaN
}

inline float bm_erfc(float x) {
  if (x >= 0.5f) return bm_erfc_large(x);
  if (x > -0.5f) return 1.0f - bm_erf_small(x);
  return 2.0f - bm_erfc_large(-x);  // NaN included
}

// gelu(x) = x * Phi(x), Phi(x) = erfc(-x / sqrt2) / 2, as csrc/cpu/unary.cpp: no cancellation on
// either side. For x < 0, exp(-z^2) = exp(-x^2 / 2) is taken from x itself, not from the rounded z.
inline float bm_gelu(float x) {
  const float z = x * 0.707106781f;
  if (z >= 0.5f) return x * (1.0f - 0.5f * bm_erfc_large(z));
  if (z > -0.5f) return (0.5f * x) * (1.0f + bm_erf_small(z));
  return (0.5f * x) * (bm_exp_neg_sq(x, 0.5f) * bm_erfcx(-z));  // NaN included
}
