// log, sin and cos for float32 in plain arithmetic, fma and selects, written once in the subset of C++
// that is also Metal Shading Language, as exp (bm_exp_f32.h): shaders/unary.metal and
// csrc/cpu/activation_f32.cpp compute the very same bits, and the CPU loops over them vectorise
// (libm's logf / sinf / cosf are scalar calls). log is within 0.88 ulp of float64 over every float32
// (bm_log_f32 below). Measured against float64 over dense grids (tests/test_vector_math.py): sin
// and cos within 1.6 ulp for |x| <= 3 and 2.5 ulp up to |x| = 4096 (the reduction's rounding).
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

// log(x) = e ln2 + log(m): m = x / 2^e in [sqrt(1/2), sqrt(2)) taken from x's bits, f = m - 1
// (exact), log(m) = log(1 + f) = f + f^2 Q(f) with Q of degree 8, fitted for the least maximum
// error of the result relative to log(1 + f) (tools/fit_log.py: 4.1e-9 = 2^-27.9; degree 7 would
// measure 1.2 ulp). The large part f is added last, in one rounding; e ln2 goes in as hi + lo
// (e * 0.693359375 is exact for |e| < 2^15), hi through the final fma. No division: the form this
// replaced, 2 atanh(f / (2 + f)), took one per element, the slowest vector instruction on x86.
// Measured over every positive float32, subnormals included, against float64 log (tools/check_log.cpp):
// at most 0.876 ulp (x = 1.2743293; the atanh form 0.854), 0.6% of them above 0.5 ulp.
// bm_log_reduced_f32(xs, k) is log(xs / 2^k) for a positive normal xs (finite for any bits).
inline float bm_log_reduced_f32(float xs, bm_i32 k) {
  // (unsigned: the bits of a negative xs minus the offset would overflow an int; bm_log_f32
  // replaces that result)
  const bm_i32 b = bm_i32(bm_u32(bm_float_bits(xs)) - bm_u32(0x3f3504f3));
  const float ef = float((b >> 23) - k);
  const float f = bm_bits_float((b & 0x007fffff) + 0x3f3504f3) - 1.0f;
  float q = -0.0762310773f;
  q = bm_fma(q, f, 0.129055917f);
  q = bm_fma(q, f, -0.132430062f);
  q = bm_fma(q, f, 0.141816199f);
  q = bm_fma(q, f, -0.166090518f);
  q = bm_fma(q, f, 0.200019851f);
  q = bm_fma(q, f, -0.250015855f);
  q = bm_fma(q, f, 0.333333254f);
  q = bm_fma(q, f, -0.499999881f);
  const float t = bm_fma(f * f, q, ef * -2.12194440e-4f);  // f^2 Q + e ln2_lo
  return bm_fma(ef, 0.693359375f, f + t);
}

// x positive, normal and finite (NaN is not): where bm_log_normal_f32 gives bm_log_f32's bits. The
// CPU loop takes it for blocks whose inputs all qualify (csrc/cpu/activation_f32.cpp).
inline bool bm_log_in_normal_range(float x) { return bm_u32(bm_float_bits(x)) - 0x00800000u < 0x7f000000u; }
inline float bm_log_normal_f32(float x) { return bm_log_reduced_f32(x, 0); }

// Subnormal x is scaled by 2^23 first; log(0) = -inf, log(inf) = inf, x < 0 and NaN give NaN. Written
// for GCC's vectoriser: GCC (12 and 13, with the default -ftrapping-math) will not speculate float
// arithmetic that a condition guards, and leaves such a loop scalar, as it left the select form this
// replaced. So the scale is a factor built from the bits (1 for a normal x) and always multiplied,
// and the special result is added to r rather than selected, so r is needed on every path. r is
// finite for any input and never -0, so r + 0 is r, and r + (-inf, inf, NaN) is that value.
inline float bm_log_f32(float x) {
  const bm_i32 ix = bm_float_bits(x);
  const bm_i32 sub = ix < 0x00800000 ? 1 : 0;  // subnormal, zero, negative
  const float r = bm_log_reduced_f32(x * bm_bits_float(0x3f800000 + sub * 0x0b800000), sub * 23);
  const float inf = bm_bits_float(0x7f800000);
  const float sp = (bm_u32(ix) << 1) == 0u ? -inf : (ix == 0x7f800000 ? x : bm_bits_float(0x7fc00000));
  return r + (bm_u32(ix) - 1u < 0x7f7fffffu ? 0.0f : sp);  // ix in [1, 0x7f7fffff]: positive finite
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
