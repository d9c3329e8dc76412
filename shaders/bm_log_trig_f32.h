// log, sin and cos for float32 in plain arithmetic, fma and selects, written once in the subset of C++
// that is also Metal Shading Language, as exp (bm_exp_f32.h): shaders/unary.metal and
// csrc/cpu/activation_f32.cpp compute the very same bits, and the CPU loops over them vectorise
// (libm's logf / sinf / cosf are scalar calls). Measured against float64 over dense grids
// (tests/test_elementwise_math.py): log within 1 ulp; sin and cos within 1.6 ulp for |x| <= 3 and
// 2.5 ulp up to |x| = 4096 (the reduction's rounding).
// Beyond that sin and cos take the libm / metal::precise function (bm_sin_f32 selects it; the CPU
// loops patch those rare lanes). log's multiply-adds are fused where bm_fma says so (correctly
// rounded at every width); every other multiply-add must stay unfused (fp-contract=off), so every
// vector width gives the bits of the scalar code.
#ifndef BESSEMER_LOG_TRIG_F32_H
#define BESSEMER_LOG_TRIG_F32_H

#include "bm_exp_f32.h"  // bm_i32, bm_float_bits, bm_bits_float

#ifdef __METAL_VERSION__
inline float bm_sin_libm(float x) { return metal::precise::sin(x); }
inline float bm_cos_libm(float x) { return metal::precise::cos(x); }
#else
#include <cmath>
inline float bm_sin_libm(float x) { return std::sin(x); }
inline float bm_cos_libm(float x) { return std::cos(x); }
#endif

// log(x) = e ln2 + log(m), m = x / 2^e in [sqrt(1/2), sqrt(2)). With f = m - 1 and s = f / (2 + f),
// log(1 + f) = 2 atanh(s) = 2s + s T(s^2), T the atanh series (|s| <= 0.172: the terms after s^9
// are below 2^-27 of the result), rearranged as f - (f^2/2 - s (f^2/2 + T)) so the large part f is
// added last, exactly. Subnormal x is scaled by 2^23 first. log(0) = -inf, log(inf) = inf, x < 0
// and NaN give NaN.
inline float bm_log_f32(float x) {
  const bool sub = x < 1.17549435e-38f;  // subnormal, zero, negative (replaced below)
  const float xs = sub ? x * 8388608.0f : x;
  // m's bits: the mantissa of xs re-based so that m lands in [sqrt(1/2), sqrt(2)); e the exponent.
  // (unsigned: a negative x's bits minus the offset would overflow an int; its result is replaced)
  const bm_i32 b = bm_i32(bm_u32(bm_float_bits(xs)) - bm_u32(0x3f3504f3));
  const bm_i32 e = (b >> 23) - (sub ? 23 : 0);
  const float m = bm_bits_float((b & 0x007fffff) + 0x3f3504f3);
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float t = 0.22222222f;  // 2/9
  t = bm_fma(t, z, 0.28571429f);  // 2/7
  t = bm_fma(t, z, 0.40000001f);  // 2/5
  t = bm_fma(t, z, 0.66666669f);  // 2/3
  t = t * z;
  const float hf = 0.5f * f * f;
  const float ef = float(e);
  // e ln2 as hi + lo: e * 0.693359375 is exact for |e| < 2^15
  const float r = bm_fma(ef, 0.693359375f, f - (hf - bm_fma(s, hf + t, ef * -2.12194440e-4f)));
  const float inf = bm_bits_float(0x7f800000);
  return x > 0.0f ? (x < inf ? r : x) : (x == 0.0f ? -inf : bm_bits_float(0x7fc00000));
}

// sin / cos for |x| <= 4096: x = j pi/2 + r, |r| <= pi/4, with pi/2 split in three parts (the first
// two of 12 bits, so j * part is exact for j < 2^12: a Cody-Waite reduction without fma), then the
// Taylor series of sin (to r^9) and cos (to r^10) on r, picked and signed by j mod 4.
inline float bm_sincos_reduced_f32(float x, int shift) {
  const float kMagic = 12582912.0f;  // 1.5 * 2^23: rounds to an integer, as in bm_exp_f32
  const float v = x * 0.636619772f + kMagic;
  const float jf = v - kMagic;
  const bm_i32 q = (bm_float_bits(v) - bm_float_bits(kMagic) + shift) & 3;
  float r = x - jf * 1.57080078125f;
  r = r - jf * -4.4535845518112183e-06f;
  r = r - jf * -8.7055157527160532e-10f;
  const float z = r * r;
  float ps = 2.75573192e-6f;  // 1/9!
  ps = ps * z + -1.98412698e-4f;
  ps = ps * z + 8.33333333e-3f;
  ps = ps * z + -1.66666667e-1f;
  const float sn = r + r * (z * ps);
  float pc = -2.75573192e-7f;  // -1/10!
  pc = pc * z + 2.48015873e-5f;
  pc = pc * z + -1.38888889e-3f;
  pc = pc * z + 4.16666667e-2f;
  const float cs = (1.0f - 0.5f * z) + (z * z) * pc;
  const float w = (q & 1) != 0 ? cs : sn;
  return (q & 2) != 0 ? -w : w;
}

inline float bm_sin_reduced_f32(float x) {
  return x == 0.0f ? x : bm_sincos_reduced_f32(x, 0);  // keeps sin(-0) = -0
}
inline float bm_cos_reduced_f32(float x) { return bm_sincos_reduced_f32(x, 1); }

// |x| up to which the reduced forms hold (NaN compares false: it takes the libm path).
inline bool bm_trig_in_range(float x) { return x <= 4096.0f && x >= -4096.0f; }

inline float bm_sin_f32(float x) { return bm_trig_in_range(x) ? bm_sin_reduced_f32(x) : bm_sin_libm(x); }
inline float bm_cos_f32(float x) { return bm_trig_in_range(x) ? bm_cos_reduced_f32(x) : bm_cos_libm(x); }

#endif
