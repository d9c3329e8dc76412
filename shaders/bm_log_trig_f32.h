// log, sin and cos for float32 in plain arithmetic, fma and selects, written once in the subset of C++
// that is also Metal Shading Language, as exp (bm_exp_f32.h): shaders/unary.metal and
// csrc/cpu/activation_f32.cpp compute the very same bits, and the CPU loops over them vectorise
// (libm's logf / sinf / cosf are scalar calls). log is within 0.88 ulp of float64 over every
// positive float32 (tools/check_log.cpp); sin and cos, over every float32 with |x| <= 4096
// (tools/check_trig.cpp), within 1.36 and 1.49 ulp for |x| <= 3 and 1.53 ulp up to |x| = 4096.
// Beyond that sin and cos take the libm / metal::precise function (bm_sin_f32 selects it; the CPU
// loops patch those rare lanes). Multiply-adds are fused where bm_fma says so (correctly rounded at
// every width); every other multiply-add must stay unfused (fp-contract=off), so every vector width
// gives the bits of the scalar code.
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

// bm_log_f32's bits for positive normal finite x (bits in [0x00800000, 0x7f7fffff]): the CPU loop
// takes it for blocks whose inputs all qualify (csrc/cpu/activation_f32.cpp).
inline float bm_log_normal_f32(float x) { return bm_log_reduced_f32(x, 0); }

// Subnormal x is scaled by 2^23 first; log(0) = -inf, log(inf) = inf, x < 0 and NaN give NaN.
// Branch-free with no guarded arithmetic, so it vectorises even where float traps are modelled
// (GCC's default -ftrapping-math; the project builds with -fno-trapping-math): the scale is a
// factor built from the bits (1 for a normal x) and always applied, and the special result is
// added to r, which is finite and never -0 for any input (r + 0 is r; r + (-inf, inf, NaN) is that).
inline float bm_log_f32(float x) {
  const bm_i32 ix = bm_float_bits(x);
  const bm_i32 sub = ix < 0x00800000 ? 1 : 0;  // subnormal, zero, negative
  const float r = bm_log_reduced_f32(x * bm_bits_float(0x3f800000 + sub * 0x0b800000), sub * 23);
  const float inf = bm_bits_float(0x7f800000);
  const float sp = (bm_u32(ix) << 1) == 0u ? -inf : (ix == 0x7f800000 ? x : bm_bits_float(0x7fc00000));
  return r + (bm_u32(ix) - 1u < 0x7f7fffffu ? 0.0f : sp);  // ix in [1, 0x7f7fffff]: positive finite
}

// sin / cos for |x| <= 4096: x = j pi/2 + r with j = round(x * 2/pi) (the 1.5 * 2^23 trick of
// bm_exp_f32; from a rounded product, so |r| <= pi/4 + 2e-4). pi/2 is split in three float32 parts
// (72 bits), each truncated so that all are positive and the reduction keeps -0; subtracted with
// bm_fma, the first step is exact and the other two round at r's own magnitude: r is within an ulp
// of x - j pi/2 also next to a zero of sin or cos, where the result, and its ulp, is small. Then
// sin(r) = r + (r z) S(z) and cos(r) = 1 + z C(z), z = r^2, S of degree 2 and C of degree 3
// (minimax relative error, tools/fit_trig.py); j's low bit picks one, its second bit the sign.
// For cos, magic = 1.5 * 2^23 + 1 adds one to j at no cost (cos(x) = sin(x + pi/2)); v's low two
// bits are j's (1.5 * 2^23's are zero).
// Why this form: 3 fma for the reduction and 10 operations for both polynomials, where the Taylor
// series after an unfused Cody-Waite reduction it replaces took twice as many: 1.6-2x faster
// (tools/bench_trig.cpp, AVX-512 and AVX2), and more accurate (old: 1.43 / 1.55 ulp for |x| <= 3,
// 2.45 / 2.34 up to 4096). Reducing by pi instead, one odd polynomial on |r| <= pi/2 and no pick,
// is another 20-30% faster but less accurate: near |r| = pi/2, r + r z P(z) loses 1.65 ulp to the
// rounding of its terms, and for |x| < 1 cos's r = x -/+ pi/2 is rounded to 2^-24 (1.81 ulp).
inline float bm_sincos_reduced_f32(float x, float magic) {
  const float v = bm_fma(x, 0.636619772f, magic);  // magic + round(x * 2/pi)
  const float j = v - magic;
  float r = bm_fma(j, -1.57079625f, x);
  r = bm_fma(j, -7.54978942e-08f, r);
  r = bm_fma(j, -5.39030295e-15f, r);
  const bm_i32 q = bm_float_bits(v);  // low two bits: the quadrant
  const float z = r * r;
  float ps = -1.95182773e-04f;
  ps = bm_fma(ps, z, 8.33218917e-03f);
  ps = bm_fma(ps, z, -1.66666552e-01f);
  // sin(r) has r's sign (|r| < pi/2); or-ing it in keeps sin(-0) = -0, which the sum would lose
  const float sn = bm_bits_float(bm_float_bits(bm_fma(r * z, ps, r)) | (bm_float_bits(r) & bm_float_bits(-0.0f)));
  float pc = 2.44325583e-05f;
  pc = bm_fma(pc, z, -1.38873106e-03f);
  pc = bm_fma(pc, z, 4.16666456e-02f);
  pc = bm_fma(pc, z, -0.5f);
  const float cs = bm_fma(z, pc, 1.0f);
  const float w = (q & 1) != 0 ? cs : sn;
  return bm_bits_float(bm_float_bits(w) ^ bm_i32(bm_u32(q & 2) << 30));
}

inline float bm_sin_reduced_f32(float x) { return bm_sincos_reduced_f32(x, 12582912.0f); }  // 1.5 * 2^23
inline float bm_cos_reduced_f32(float x) { return bm_sincos_reduced_f32(x, 12582913.0f); }

// |x| up to which the reduced forms hold (NaN compares false: it takes the libm path).
inline bool bm_trig_in_range(float x) { return x <= 4096.0f && x >= -4096.0f; }

inline float bm_sin_f32(float x) { return bm_trig_in_range(x) ? bm_sin_reduced_f32(x) : bm_sin_libm(x); }
inline float bm_cos_f32(float x) { return bm_trig_in_range(x) ? bm_cos_reduced_f32(x) : bm_cos_libm(x); }

#endif
