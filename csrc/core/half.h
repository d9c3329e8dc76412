// Software float16 / bfloat16 storage types. Arithmetic is done in float32 and rounded back on
// store (round-to-nearest-even), exactly as numpy's float16 loops and Metal's half do for one op.
#pragma once
#include <cstdint>
#include <cstring>

namespace bm {

inline uint32_t float_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

inline float half_bits_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));  // inf / nan
  if (exp == 0) {
    if (mant == 0) return bits_float(sign);
    // subnormal: value = mant * 2^-24, exact in float32
    float v = float(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t float_to_half_bits(float f) {
  uint32_t u = float_bits(f);
  uint16_t sign = uint16_t((u >> 16) & 0x8000);
  uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | (a > 0x7f800000u ? 0x7e00 : 0x7c00);  // nan / inf
  if (a >= 0x477ff000u) return sign | 0x7c00;  // rounds to >= 65520: overflow to inf
  if (a < 0x38800000u) {                        // below the smallest normal half: subnormal
    // Adding 0.5 (2^-1) aligns the mantissa so the FPU does round-to-nearest-even for us.
    float r = bits_float(a) + 0.5f;
    return sign | uint16_t(float_bits(r) - 0x3f000000u);
  }
  uint32_t mant_odd = (a >> 13) & 1;
  a += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
  return sign | uint16_t(a >> 13);
}

inline float bf16_bits_to_float(uint16_t b) { return bits_float(uint32_t(b) << 16); }
inline uint16_t float_to_bf16_bits(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);  // quiet nan
  u += 0x7fffu + ((u >> 16) & 1);  // round to nearest even
  return uint16_t(u >> 16);
}

struct half_t {
  uint16_t bits = 0;
  half_t() = default;
  half_t(float f) : bits(float_to_half_bits(f)) {}
  operator float() const { return half_bits_to_float(bits); }
  static half_t from_bits(uint16_t b) { half_t h; h.bits = b; return h; }
};

struct bfloat16_t {
  uint16_t bits = 0;
  bfloat16_t() = default;
  bfloat16_t(float f) : bits(float_to_bf16_bits(f)) {}
  operator float() const { return bf16_bits_to_float(bits); }
  static bfloat16_t from_bits(uint16_t b) { bfloat16_t h; h.bits = b; return h; }
};

}  // namespace bm
