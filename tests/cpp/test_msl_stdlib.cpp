// The metal_stdlib stand-in on its own (no kernel launch): half/bfloat agree bit for bit with
// core/half.h, vectors follow MSL's layout and construction rules, swizzles write back, and the
// math, integer and bit functions compute what MSL specifies.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/half.h"
#include <metal_stdlib>

namespace M = metal;

namespace {
uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace

TEST_CASE("msl stdlib: half and bfloat convert exactly like core/half.h") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float a = M::half::from_bits(uint16_t(h)), b = bm::half_bits_to_float(uint16_t(h));
    REQUIRE(bits(a) == bits(b));
    REQUIRE(bits(float(M::bfloat::from_bits(uint16_t(h)))) == bits(bm::bf16_bits_to_float(uint16_t(h))));
  }
  // Every float whose low bits are a multiple of 2^13 - 1 apart: all exponents, both rounding
  // directions, ties, subnormal halves, overflow, infinities and NaNs.
  for (uint64_t u = 0; u <= 0xffffffffull; u += 8191) {
    float f = from_bits(uint32_t(u));
    REQUIRE(M::half(f).bits == bm::float_to_half_bits(f));
    REQUIRE(M::bfloat(f).bits == bm::float_to_bf16_bits(f));
  }
  constexpr M::half k = M::half(0.1f);  // usable in constant expressions (`0.1h`)
  static_assert(k.bits == 0x2e66, "0.1 rounds to 0x2e66");
}

TEST_CASE("msl stdlib: half arithmetic rounds once per operation, mixed types follow MSL") {
  M::half a = 0.1f, b = 0.2f;
  M::half s = a + b;  // half + half -> half
  CHECK(s.bits == bm::half_t(float(a) + float(b)).bits);
  auto f = a + 0.2f;  // half + float -> float
  CHECK(std::is_same_v<decltype(f), float>);
  CHECK(f == float(a) + 0.2f);
  auto i = a * 3;  // half + int -> half
  CHECK(std::is_same_v<decltype(i), M::half>);
  M::half big = 60000.0f;
  CHECK(std::isinf(float(big + big)));
  CHECK(float(-a) == -float(a));
  CHECK(float(M::numeric_limits<M::half>::max()) == 65504.0f);
  CHECK(float(M::numeric_limits<M::half>::epsilon()) == 0.0009765625f);
  CHECK(std::isnan(float(M::numeric_limits<M::bfloat>::quiet_NaN())));
}

TEST_CASE("msl stdlib: vector layout and construction") {
  static_assert(sizeof(M::float3) == 16 && alignof(M::float3) == 16);
  static_assert(sizeof(M::half3) == 8 && sizeof(M::uchar3) == 4 && sizeof(M::long2) == 16);
  M::float4 v(1.0f, 2.0f, 3.0f, 4.0f);
  M::float4 cat(M::float2(1, 2), 3, 4);
  CHECK(M::all(v == cat));
  M::float4 broadcast = 2.5f;
  CHECK(M::all(broadcast == M::float4(2.5f, 2.5f, 2.5f, 2.5f)));
  M::int4 conv(M::float4(1.9f, -1.9f, 2.5f, -0.5f));  // value conversion, not reinterpretation
  CHECK(M::all(conv == M::int4(1, -1, 2, 0)));
  M::float4 zero{};
  CHECK(M::all(zero == 0.0f));
  CHECK(v.x == 1.0f);
  CHECK(v.a == 4.0f);
  CHECK(v[2] == 3.0f);
  CHECK(!std::is_convertible_v<M::int4, M::float4>);  // no implicit conversion between vectors
}

TEST_CASE("msl stdlib: swizzles read, write back, and alias safely") {
  M::float4 v(1, 2, 3, 4);
  M::float3 r = v.swizzle<2, 1, 0>();
  CHECK(M::all(r == M::float3(3, 2, 1)));
  v.swizzle<0, 1>() = v.swizzle<1, 0>();  // v.xy = v.yx
  CHECK(M::all(v == M::float4(2, 1, 3, 4)));
  v.swizzle<3, 2>() += M::float2(10, 20);  // v.wz += ...
  CHECK(M::all(v == M::float4(2, 1, 23, 14)));
  const M::float4 c = v;
  CHECK(M::all(c.swizzle<0, 0>() == M::float2(2, 2)));
  CHECK(M::dot(v.swizzle<0, 1>(), M::float2(1, 1)) == 3.0f);  // a swizzle is a vector
  M::uint2 u = M::as_type<M::uint2>(M::float2(1.0f, -2.0f));
  CHECK(u.x == 0x3f800000u);
  CHECK(u.y == 0xc0000000u);
  // Scalars too (two's complement reinterpretation, used for wrapping integer arithmetic).
  CHECK(M::as_type<int>(0xffffffffu) == -1);
  CHECK(M::as_type<long>(M::ulong(1) << 63) == std::numeric_limits<long>::min());
  CHECK(M::as_type<M::uint>(1.0f) == 0x3f800000u);
  // scalars reinterpret too (64-bit values are shuffled as two 32-bit halves)
  M::uint2 h = M::as_type<M::uint2>(long(-2));
  CHECK(h.x == 0xfffffffeu);
  CHECK(h.y == 0xffffffffu);
  CHECK(M::as_type<long>(h) == -2);
  CHECK(M::as_type<uint>(1.0f) == 0x3f800000u);
}

TEST_CASE("msl stdlib: vector operators and relational functions") {
  M::int4 a(1, -2, 3, 4), b(2, 2, 2, 2);
  CHECK(M::all(a * b + 1 == M::int4(3, -3, 7, 9)));
  CHECK(M::all(a % b == M::int4(1, 0, 1, 0)));
  CHECK(M::all((a << 1) == M::int4(2, -4, 6, 8)));
  M::bool4 lt = a < b;
  CHECK(lt.x);
  CHECK(!lt.z);
  CHECK(M::any(lt));
  CHECK(!M::all(lt));
  CHECK(M::all(M::select(a, b, lt) == M::int4(2, 2, 3, 4)));
  M::half2 h(1.5f, 2.0f);
  h *= M::half(2.0f);
  CHECK(float(h.y) == 4.0f);
}

TEST_CASE("msl stdlib: math functions, NaN handling, integer and bit functions") {
  CHECK(M::exp(1.0f) == std::exp(1.0f));
  CHECK(M::precise::sqrt(2.0f) == std::sqrt(2.0f));
  CHECK(M::fast::tanh(0.5f) == std::tanh(0.5f));
  CHECK(M::rsqrt(4.0f) == 0.5f);
  CHECK(M::max(NAN, 1.0f) == 1.0f);  // MSL min/max on floats are fmin/fmax
  CHECK(M::min(1.0f, NAN) == 1.0f);
  CHECK(M::clamp(5.0f, 0.0f, 1.0f) == 1.0f);
  CHECK(M::fma(2.0f, 3.0f, 1.0f) == 7.0f);
  CHECK(M::isnan(M::half(NAN)));
  CHECK(M::all(M::isinf(M::float2(INFINITY, -INFINITY))));
  CHECK(M::fract(-0.25f) == 0.75f);
  CHECK(M::sign(-3.0f) == -1.0f);
  CHECK(M::all(M::max(M::float3(1, 5, -2), 0.0f) == M::float3(1, 5, 0)));
  CHECK(M::all(M::clamp(M::float2(-1, 2), 0.0f, 1.0f) == M::float2(0, 1)));
  CHECK(float(M::exp(M::half(1.0f))) == float(bm::half_t(std::exp(float(M::half(1.0f))))));
  CHECK(M::abs(-3) == 3);
  CHECK(M::max(3u, 7u) == 7u);
  CHECK(M::clz(1u) == 31u);
  CHECK(M::clz(M::ushort(1)) == 15);
  CHECK(M::ctz(8) == 3);
  CHECK(M::popcount(0xf0f0u) == 8u);
  CHECK(M::mulhi(0x80000000u, 4u) == 2u);
  CHECK(M::length(M::float2(3, 4)) == 5.0f);
  CHECK(M::all(M::cross(M::float3(1, 0, 0), M::float3(0, 1, 0)) == M::float3(0, 0, 1)));
}

TEST_CASE("msl stdlib: type traits count half and bfloat as floating point") {
  static_assert(M::is_floating_point_v<M::half> && M::is_floating_point_v<const M::bfloat>);
  static_assert(M::is_floating_point_v<float> && !M::is_floating_point_v<int>);
  static_assert(M::is_arithmetic_v<M::half> && M::is_scalar_v<uint32_t>);
  static_assert(M::is_vector_v<M::half4> && !M::is_vector_v<M::half>);
  static_assert(M::is_same_v<M::make_unsigned_t<int>, unsigned>);
  CHECK(M::is_floating_point<M::half>::value);  // the compile-time checks above are the test
}

TEST_CASE("msl stdlib: atomics on plain storage") {
  M::atomic_uint u;
  M::atomic_store_explicit(&u, 5u, M::memory_order_relaxed);
  CHECK(M::atomic_fetch_add_explicit(&u, 3u, M::memory_order_relaxed) == 5u);
  CHECK(M::atomic_fetch_max_explicit(&u, 20u, M::memory_order_relaxed) == 8u);
  CHECK(M::atomic_exchange_explicit(&u, 1u, M::memory_order_relaxed) == 20u);
  uint32_t expected = 1;
  CHECK(M::atomic_compare_exchange_weak_explicit(&u, &expected, 9u, M::memory_order_relaxed, M::memory_order_relaxed));
  CHECK(M::atomic_load_explicit(&u, M::memory_order_relaxed) == 9u);
  M::atomic_float f;
  M::atomic_store_explicit(&f, 1.5f, M::memory_order_relaxed);
  M::atomic_fetch_add_explicit(&f, 2.25f, M::memory_order_relaxed);
  CHECK(M::atomic_load_explicit(&f, M::memory_order_relaxed) == 3.75f);
}
