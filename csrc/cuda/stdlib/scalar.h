// MSL scalar types for the CUDA stand-in: the integer aliases, `half` and `bfloat`.
// half and bfloat are 16-bit storage types whose every operation computes in float and rounds
// back once (round to nearest even): the same definitions, bit for bit, as the simulator's
// csrc/msl_sim/stdlib/scalar.h, so a kernel computes the same numbers on both. (CUDA's __half
// would round differently in places, e.g. through fused or 16-bit hardware arithmetic.)
#pragma once
#include "cuda/stdlib/traits.h"

namespace metal {

typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
typedef unsigned long ulong;  // 64-bit under NVRTC on 64-bit hosts, as in MSL
static_assert(sizeof(ulong) == 8 && sizeof(long) == 8, "MSL long is 64-bit");

namespace detail {

constexpr uint fbits(float f) { return __builtin_bit_cast(uint, f); }
constexpr float bitsf(uint u) { return __builtin_bit_cast(float, u); }

constexpr float half_to_float(ushort h) {
  uint sign = uint(h & 0x8000) << 16;
  uint exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) return bitsf(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return bitsf(sign);
    float v = float(mant) * (1.0f / 16777216.0f);  // subnormal: mant * 2^-24, exact
    return sign ? -v : v;
  }
  return bitsf(sign | ((exp + 112) << 23) | (mant << 13));
}

constexpr ushort float_to_half(float f) {
  uint u = fbits(f);
  ushort sign = ushort((u >> 16) & 0x8000);
  uint a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return ushort(sign | (a > 0x7f800000u ? 0x7e00 : 0x7c00));
  if (a >= 0x477ff000u) return ushort(sign | 0x7c00);
  if (a < 0x38800000u) {  // subnormal half: adding 0.5 makes the FPU round to nearest even
    float r = bitsf(a) + 0.5f;
    return ushort(sign | ushort(fbits(r) - 0x3f000000u));
  }
  uint mant_odd = (a >> 13) & 1;
  a += 0xc8000fffu + mant_odd;
  return ushort(sign | ushort(a >> 13));
}

constexpr float bfloat_to_float(ushort b) { return bitsf(uint(b) << 16); }
constexpr ushort float_to_bfloat(float f) {
  uint u = fbits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return ushort((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1);
  return ushort(u >> 16);
}

template <class T>
constexpr bool is_int_v = is_integral_v<T>;

}  // namespace detail

#define BM_CUDA_FLOAT16_TYPE(NAME, TO_FLOAT, FROM_FLOAT)                                             \
  struct NAME {                                                                                      \
    ushort bits;                                                                                     \
    NAME() = default;                                                                                \
    constexpr NAME(float f) : bits(detail::FROM_FLOAT(f)) {}                                         \
    constexpr NAME(double d) : bits(detail::FROM_FLOAT(float(d))) {}                                 \
    template <class I, enable_if_t<detail::is_int_v<I>, int> = 0>                                    \
    constexpr NAME(I i) : bits(detail::FROM_FLOAT(float(i))) {}                                      \
    constexpr operator float() const { return detail::TO_FLOAT(bits); }                              \
    static constexpr NAME from_bits(ushort b) {                                                      \
      NAME h{};                                                                                      \
      h.bits = b;                                                                                    \
      return h;                                                                                      \
    }                                                                                                \
    constexpr NAME operator-() const { return from_bits(ushort(bits ^ 0x8000)); }                    \
    constexpr NAME operator+() const { return *this; }                                               \
    NAME& operator++() { return *this = NAME(float(*this) + 1.0f); }                                 \
    NAME& operator--() { return *this = NAME(float(*this) - 1.0f); }                                 \
    NAME operator++(int) { NAME t = *this; ++*this; return t; }                                      \
    NAME operator--(int) { NAME t = *this; --*this; return t; }                                      \
  };                                                                                                 \
  BM_CUDA_FLOAT16_OPS(NAME, +) BM_CUDA_FLOAT16_OPS(NAME, -) BM_CUDA_FLOAT16_OPS(NAME, *)             \
  BM_CUDA_FLOAT16_OPS(NAME, /)                                                                       \
  BM_CUDA_FLOAT16_CMP(NAME, ==) BM_CUDA_FLOAT16_CMP(NAME, !=) BM_CUDA_FLOAT16_CMP(NAME, <)           \
  BM_CUDA_FLOAT16_CMP(NAME, <=) BM_CUDA_FLOAT16_CMP(NAME, >) BM_CUDA_FLOAT16_CMP(NAME, >=)

// NAME op NAME -> NAME (rounded once); with float -> float; with an integer -> NAME.
#define BM_CUDA_FLOAT16_OPS(NAME, OP)                                                                \
  constexpr NAME operator OP(NAME a, NAME b) { return NAME(float(a) OP float(b)); }                  \
  constexpr float operator OP(NAME a, float b) { return float(a) OP b; }                             \
  constexpr float operator OP(float a, NAME b) { return a OP float(b); }                             \
  template <class I, enable_if_t<detail::is_int_v<I>, int> = 0>                                     \
  constexpr NAME operator OP(NAME a, I b) { return NAME(float(a) OP float(b)); }                     \
  template <class I, enable_if_t<detail::is_int_v<I>, int> = 0>                                     \
  constexpr NAME operator OP(I a, NAME b) { return NAME(float(a) OP float(b)); }                     \
  inline NAME& operator OP##=(NAME& a, NAME b) { return a = a OP b; }                                \
  inline NAME& operator OP##=(NAME& a, float b) { return a = NAME(float(a) OP b); }                  \
  template <class I, enable_if_t<detail::is_int_v<I>, int> = 0>                                     \
  inline NAME& operator OP##=(NAME& a, I b) { return a = a OP b; }                                   \
  inline float& operator OP##=(float& a, NAME b) { return a = a OP float(b); }

#define BM_CUDA_FLOAT16_CMP(NAME, OP)                                                                \
  constexpr bool operator OP(NAME a, NAME b) { return float(a) OP float(b); }                        \
  constexpr bool operator OP(NAME a, float b) { return float(a) OP b; }                              \
  constexpr bool operator OP(float a, NAME b) { return a OP float(b); }                              \
  template <class I, enable_if_t<detail::is_int_v<I>, int> = 0>                                      \
  constexpr bool operator OP(NAME a, I b) { return float(a) OP float(b); }                           \
  template <class I, enable_if_t<detail::is_int_v<I>, int> = 0>                                      \
  constexpr bool operator OP(I a, NAME b) { return float(a) OP float(b); }

BM_CUDA_FLOAT16_TYPE(half, half_to_float, float_to_half)
BM_CUDA_FLOAT16_TYPE(bfloat, bfloat_to_float, float_to_bfloat)

#undef BM_CUDA_FLOAT16_TYPE
#undef BM_CUDA_FLOAT16_OPS
#undef BM_CUDA_FLOAT16_CMP

static_assert(sizeof(half) == 2 && sizeof(bfloat) == 2, "half and bfloat are 16-bit storage");

namespace detail {
template <> struct is_float16<half> : true_type {};
template <> struct is_float16<bfloat> : true_type {};
}  // namespace detail

// metal::numeric_limits for the types shaders use.
template <class T> struct numeric_limits;
#define BM_CUDA_LIMITS(T, LO, HI, IS_INT)                                                            \
  template <> struct numeric_limits<T> {                                                             \
    static constexpr bool is_specialized = true, is_integer = IS_INT;                                \
    static constexpr T lowest() { return LO; }                                                       \
    static constexpr T max() { return HI; }                                                          \
  };
BM_CUDA_LIMITS(int, -2147483647 - 1, 2147483647, true)
BM_CUDA_LIMITS(uint, 0u, 4294967295u, true)
BM_CUDA_LIMITS(long, -9223372036854775807L - 1, 9223372036854775807L, true)
BM_CUDA_LIMITS(ulong, 0ul, 18446744073709551615ul, true)
#undef BM_CUDA_LIMITS
template <> struct numeric_limits<float> {
  static constexpr bool is_specialized = true, is_integer = false, has_infinity = true;
  static constexpr float lowest() { return -0x1.fffffep+127f; }
  static constexpr float max() { return 0x1.fffffep+127f; }
  static constexpr float min() { return 0x1p-126f; }
  static constexpr float epsilon() { return 0x1p-23f; }
  static constexpr float infinity() { return __builtin_bit_cast(float, 0x7f800000u); }
  static constexpr float quiet_NaN() { return __builtin_bit_cast(float, 0x7fc00000u); }
};
#define BM_CUDA_F16_LIMITS(NAME, MAXB, MINB, EPSB, NANB)                                             \
  template <> struct numeric_limits<NAME> {                                                          \
    static constexpr bool is_specialized = true, is_integer = false, has_infinity = true;            \
    static constexpr NAME min() { return NAME::from_bits(MINB); }                                    \
    static constexpr NAME max() { return NAME::from_bits(MAXB); }                                    \
    static constexpr NAME lowest() { return NAME::from_bits(ushort(MAXB | 0x8000)); }                \
    static constexpr NAME epsilon() { return NAME::from_bits(EPSB); }                                \
    static constexpr NAME infinity() { return NAME::from_bits(MAXB + 1); }                           \
    static constexpr NAME quiet_NaN() { return NAME::from_bits(NANB); }                              \
  };
BM_CUDA_F16_LIMITS(half, 0x7bff, 0x0400, 0x1400, 0x7e00)
BM_CUDA_F16_LIMITS(bfloat, 0x7f7f, 0x0080, 0x3c00, 0x7fc0)
#undef BM_CUDA_F16_LIMITS

}  // namespace metal
