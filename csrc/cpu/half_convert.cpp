// The loops of half_convert.h, compiled once per instruction set (bessemer_isa_variants in
// CMakeLists.txt). Each is core/half.h's scalar conversion with its branches turned into selects
// between values computed for every element, which the compiler vectorises (8 or 16 lanes): the
// branchy scalar form ran at ~1.2 ns an element on two threads, as long as the float32 product
// the half-type matmul hands to BLAS (matmul.cpp).
#include "cpu/half_convert.h"

#include <cstdint>
#include <cstring>

#include "cpu/isa.h"

namespace bm::cpu {
BM_ISA_DECLARE(void h2f(const uint16_t* h, float* f, int64_t n))
BM_ISA_DECLARE(void f2h(const float* f, uint16_t* h, int64_t n))
BM_ISA_DECLARE(void b2f(const uint16_t* b, float* f, int64_t n))
BM_ISA_DECLARE(void f2b(const float* f, uint16_t* b, int64_t n))
}

namespace bm::cpu::BM_ISA_NS {

namespace {
inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace

// half_bits_to_float: normal numbers rebias the exponent (+112), inf/NaN keep their payload under
// an all-ones exponent, subnormals are mant * 2^-24 (exact in float32), zeros keep the sign.
void h2f(const uint16_t* h, float* f, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t x = h[i], sign = (x & 0x8000u) << 16, em = x & 0x7fffu;
    const uint32_t normal = (em << 13) + (112u << 23);
    const uint32_t special = (em << 13) | 0x7f800000u;
    const uint32_t sub = bits_of(float(int32_t(em)) * (1.0f / 16777216.0f));  // 0 for em == 0
    // (selected with masks: as ?: GCC keeps a branch around the float multiply and the loop scalar)
    const uint32_t is_special = 0u - uint32_t(em >= 0x7c00u), is_sub = 0u - uint32_t(em < 0x0400u);
    const uint32_t mag = (special & is_special) | (sub & is_sub) | (normal & ~(is_special | is_sub));
    f[i] = float_of(sign | mag);
  }
}

// float_to_half_bits: NaN -> 0x7e00, >= 65520 -> inf, below 2^-14 rounded by the float adder
// (adding 0.5 aligns the mantissa), normal numbers rebiased and rounded to nearest even.
void f2h(const float* f, uint16_t* h, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = bits_of(f[i]), a = u & 0x7fffffffu, sign = (u >> 16) & 0x8000u;
    const uint32_t special = a > 0x7f800000u ? 0x7e00u : 0x7c00u;
    const uint32_t sub = bits_of(float_of(a) + 0.5f) - 0x3f000000u;
    const uint32_t normal = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
    const uint32_t mag = a >= 0x477ff000u ? special : a < 0x38800000u ? sub : normal;
    h[i] = uint16_t(sign | mag);
  }
}

void b2f(const uint16_t* b, float* f, int64_t n) {
  for (int64_t i = 0; i < n; ++i) f[i] = float_of(uint32_t(b[i]) << 16);
}

// float_to_bf16_bits: NaN quieted (| 0x40 on the top half), else rounded to nearest even.
void f2b(const float* f, uint16_t* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = bits_of(f[i]);
    const uint32_t nan = (u >> 16) | 0x40u, rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    b[i] = uint16_t((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
  }
}

}  // namespace bm::cpu::BM_ISA_NS

#if BM_ISA_IS_BASE  // the entry points, compiled once
namespace bm::cpu {
void half_to_float_run(const uint16_t* h, float* f, int64_t n) { BM_ISA_CALL(h2f, h, f, n); }
void float_to_half_run(const float* f, uint16_t* h, int64_t n) { BM_ISA_CALL(f2h, f, h, n); }
void bf16_to_float_run(const uint16_t* b, float* f, int64_t n) { BM_ISA_CALL(b2f, b, f, n); }
void float_to_bf16_run(const float* f, uint16_t* b, int64_t n) { BM_ISA_CALL(f2b, f, b, n); }
}  // namespace bm::cpu
#endif
