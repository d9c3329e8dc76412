// float32 add sub mul div over dense rows, compiled once per instruction set (csrc/cpu/isa.h) and
// picked at run time: binary.cpp's own loops are baseline x86-64 (SSE2), a third to a half of
// torch's speed on tensors that sit in L2 or L3. Plain IEEE operations, so every copy gives the
// baseline's bits. binary_f32.cpp.
#pragma once
#include <cstdint>

namespace bm::cpu {

enum class BinF32 : int { add, sub, mul, div };

// o[k] = a[k * sa] op b[k * sb] for k < n, with sa, sb in {0, 1}: 1 a dense row, 0 a broadcast
// scalar (not both 0). o may equal a or b.
void binary_f32(BinF32 op, const float* a, int64_t sa, const float* b, int64_t sb, float* o, int64_t n);

}  // namespace bm::cpu
