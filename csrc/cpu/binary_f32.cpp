// The loops of binary_f32.h. Compiled once per instruction set (bessemer_isa_variants in
// CMakeLists.txt) with -ffp-contract=off; each is one IEEE operation per element, the same bits
// at every width.
#include "cpu/binary_f32.h"

#include <cstdint>

#include "cpu/isa.h"

namespace bm::cpu {
BM_ISA_DECLARE(void binary_f32_loop(BinF32 op, const float* a, int64_t sa, const float* b, int64_t sb, float* o,
                                    int64_t n))
}

namespace bm::cpu::BM_ISA_NS {

namespace {

template <BinF32 Op>
inline float apply(float a, float b) {
  if constexpr (Op == BinF32::add) return a + b;
  else if constexpr (Op == BinF32::sub) return a - b;
  else if constexpr (Op == BinF32::mul) return a * b;
  else return a / b;
}

// The broadcast operand is read once into a register, so the loop body is one load, one
// operation and one store a vector (o == a or o == b is the in-place case and reads each element
// before writing it).
template <BinF32 Op>
void rows(const float* a, int64_t sa, const float* b, int64_t sb, float* o, int64_t n) {
  if (sa && sb) {
    for (int64_t k = 0; k < n; ++k) o[k] = apply<Op>(a[k], b[k]);
  } else if (sa) {
    const float bv = *b;
    for (int64_t k = 0; k < n; ++k) o[k] = apply<Op>(a[k], bv);
  } else {
    const float av = *a;
    for (int64_t k = 0; k < n; ++k) o[k] = apply<Op>(av, b[k]);
  }
}

}  // namespace

void binary_f32_loop(BinF32 op, const float* a, int64_t sa, const float* b, int64_t sb, float* o, int64_t n) {
  switch (op) {
    case BinF32::add: return rows<BinF32::add>(a, sa, b, sb, o, n);
    case BinF32::sub: return rows<BinF32::sub>(a, sa, b, sb, o, n);
    case BinF32::mul: return rows<BinF32::mul>(a, sa, b, sb, o, n);
    case BinF32::div: return rows<BinF32::div>(a, sa, b, sb, o, n);
  }
}

}  // namespace bm::cpu::BM_ISA_NS

#if BM_ISA_IS_BASE  // the entry point, compiled once
namespace bm::cpu {

void binary_f32(BinF32 op, const float* a, int64_t sa, const float* b, int64_t sb, float* o, int64_t n) {
  BM_ISA_CALL(binary_f32_loop, op, a, sa, b, sb, o, n);
}

}  // namespace bm::cpu
#endif
