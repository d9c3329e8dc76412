// MSL scalar types for the simulator: the integer aliases, `half` and `bfloat`.
// half and bfloat are storage types whose every operation computes in float and rounds back
// (round to nearest even), as Metal's half does for one op. The conversions are constexpr copies
// of csrc/core/half.h (a test checks they agree bit for bit), so `0.5h` can be a constant.
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

namespace metal {

using uint = unsigned int;
using ushort = unsigned short;
using uchar = unsigned char;
using ulong = unsigned long;  // 64-bit on every platform we build for (LP64), as in MSL
static_assert(sizeof(ulong) == 8 && sizeof(long) == 8, "MSL long is 64-bit");

namespace detail {

constexpr uint32_t fbits(float f) { return __builtin_bit_cast(uint32_t, f); }
constexpr float bitsf(uint32_t u) { return __builtin_bit_cast(float, u); }

constexpr float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) return bitsf(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return bitsf(sign);
    float v = float(mant) * (1.0f / 16777216.0f);  // subnormal: mant * 2^-24, exact
    return sign ? -v : v;
  }
  return bitsf(sign | ((exp + 112) << 23) | (mant << 13));
}

constexpr uint16_t float_to_half(float f) {
  uint32_t u = fbits(f);
  uint16_t sign = uint16_t((u >> 16) & 0x8000);
  uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return uint16_t(sign | (a > 0x7f800000u ? 0x7e00 : 0x7c00));
  if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00);
  if (a < 0x38800000u) {  // subnormal half: adding 0.5 makes the FPU round to nearest even
    float r = bitsf(a) + 0.5f;
    return uint16_t(sign | uint16_t(fbits(r) - 0x3f000000u));
  }
  uint32_t mant_odd = (a >> 13) & 1;
  a += 0xc8000fffu + mant_odd;
  return uint16_t(sign | uint16_t(a >> 13));
}

constexpr float bfloat_to_float(uint16_t b) { return bitsf(uint32_t(b) << 16); }
constexpr uint16_t float_to_bfloat(float f) {
  uint32_t u = fbits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

template <class T>
constexpr bool is_int_v = std::is_integral_v<T>;

}  // namespace detail

// One definition for both 16-bit float types; they differ only in the conversions.
#define BM_MSL_FLOAT16_TYPE(NAME, TO_FLOAT, FROM_FLOAT)                                              \
  struct NAME {                                                                                      \
    uint16_t bits;                                                                                   \
    NAME() = default;                                                                                \
    constexpr NAME(float f) : bits(detail::FROM_FLOAT(f)) {}                                         \
    constexpr NAME(double d) : bits(detail::FROM_FLOAT(float(d))) {}                                 \
    template <class I, std::enable_if_t<detail::is_int_v<I>, int> = 0>                               \
    constexpr NAME(I i) : bits(detail::FROM_FLOAT(float(i))) {}                                      \
    constexpr operator float() const { return detail::TO_FLOAT(bits); }                              \
    static constexpr NAME from_bits(uint16_t b) {                                                    \
      NAME h{};                                                                                      \
      h.bits = b;                                                                                    \
      return h;                                                                                      \
    }                                                                                                \
    constexpr NAME operator-() const { return from_bits(uint16_t(bits ^ 0x8000)); }                  \
    constexpr NAME operator+() const { return *this; }                                               \
    NAME& operator++() { return *this = NAME(float(*this) + 1.0f); }                                 \
    NAME& operator--() { return *this = NAME(float(*this) - 1.0f); }                                 \
    NAME operator++(int) { NAME t = *this; ++*this; return t; }                                      \
    NAME operator--(int) { NAME t = *this; --*this; return t; }                                      \
  };                                                                                                 \
  BM_MSL_FLOAT16_OPS(NAME, +) BM_MSL_FLOAT16_OPS(NAME, -) BM_MSL_FLOAT16_OPS(NAME, *)                \
  BM_MSL_FLOAT16_OPS(NAME, /)                                                                        \
  BM_MSL_FLOAT16_CMP(NAME, ==) BM_MSL_FLOAT16_CMP(NAME, !=) BM_MSL_FLOAT16_CMP(NAME, <)              \
  BM_MSL_FLOAT16_CMP(NAME, <=) BM_MSL_FLOAT16_CMP(NAME, >) BM_MSL_FLOAT16_CMP(NAME, >=)

// NAME op NAME -> NAME (rounded once); with float -> float; with an integer -> NAME.
#define BM_MSL_FLOAT16_OPS(NAME, OP)                                                                 \
  constexpr NAME operator OP(NAME a, NAME b) { return NAME(float(a) OP float(b)); }                  \
  constexpr float operator OP(NAME a, float b) { return float(a) OP b; }                             \
  constexpr float operator OP(float a, NAME b) { return a OP float(b); }                             \
  template <class I, std::enable_if_t<detail::is_int_v<I>, int> = 0>                                 \
  constexpr NAME operator OP(NAME a, I b) { return NAME(float(a) OP float(b)); }                     \
  template <class I, std::enable_if_t<detail::is_int_v<I>, int> = 0>                                 \
  constexpr NAME operator OP(I a, NAME b) { return NAME(float(a) OP float(b)); }                     \
  inline NAME& operator OP##=(NAME& a, NAME b) { return a = a OP b; }                                \
  inline NAME& operator OP##=(NAME& a, float b) { return a = NAME(float(a) OP b); }                  \
  template <class I, std::enable_if_t<detail::is_int_v<I>, int> = 0>                                 \
  inline NAME& operator OP##=(NAME& a, I b) { return a = a OP b; }                                   \
  inline float& operator OP##=(float& a, NAME b) { return a = a OP float(b); }

#define BM_MSL_FLOAT16_CMP(NAME, OP)                                                                 \
  constexpr bool operator OP(NAME a, NAME b) { return float(a) OP float(b); }                        \
  constexpr bool operator OP(NAME a, float b) { return float(a) OP b; }                              \
  constexpr bool operator OP(float a, NAME b) { return a OP float(b); }                              \
  template <class I, std::enable_if_t<detail::is_int_v<I>, int> = 0>                                 \
  constexpr bool operator OP(NAME a, I b) { return float(a) OP float(b); }                           \
  template <class I, std::enable_if_t<detail::is_int_v<I>, int> = 0>                                 \
  constexpr bool operator OP(I a, NAME b) { return float(a) OP float(b); }

BM_MSL_FLOAT16_TYPE(half, half_to_float, float_to_half)
BM_MSL_FLOAT16_TYPE(bfloat, bfloat_to_float, float_to_bfloat)

#undef BM_MSL_FLOAT16_TYPE
#undef BM_MSL_FLOAT16_OPS
#undef BM_MSL_FLOAT16_CMP

static_assert(sizeof(half) == 2 && std::is_trivially_copyable_v<half>, "half is 16-bit storage");

namespace detail {
template <class T> struct is_float16 : std::false_type {};
template <> struct is_float16<half> : std::true_type {};
template <> struct is_float16<bfloat> : std::true_type {};
template <class T>
constexpr bool is_scalar_float_v = std::is_floating_point_v<T> || is_float16<T>::value;
}  // namespace detail

// metal::numeric_limits: the standard one for built-in types, ours for the 16-bit floats.
template <class T>
struct numeric_limits : std::numeric_limits<T> {};

#define BM_MSL_F16_LIMITS(NAME, MAXB, MINB, EPSB, NANB, DIGITS)                                            \
  template <>                                                                                        \
  struct numeric_limits<NAME> {                                                                      \
    static constexpr bool is_specialized = true, is_signed = true, is_integer = false;               \
    static constexpr bool has_infinity = true, has_quiet_NaN = true;                                 \
    static constexpr int digits = DIGITS;                                                            \
    static constexpr NAME min() { return NAME::from_bits(MINB); }                                    \
    static constexpr NAME max() { return NAME::from_bits(MAXB); }                                    \
    static constexpr NAME lowest() { return NAME::from_bits(uint16_t(MAXB | 0x8000)); }              \
    static constexpr NAME epsilon() { return NAME::from_bits(EPSB); }                                \
    static constexpr NAME infinity() { return NAME::from_bits(MAXB + 1); }                           \
    static constexpr NAME quiet_NaN() { return NAME::from_bits(NANB); }                              \
  };
BM_MSL_F16_LIMITS(half, 0x7bff, 0x0400, 0x1400, 0x7e00, 11)
BM_MSL_F16_LIMITS(bfloat, 0x7f7f, 0x0080, 0x3c00, 0x7fc0, 8)
#undef BM_MSL_F16_LIMITS

}  // namespace metal
