// float16 / bfloat16 <-> float32 over contiguous runs, vectorised (half_convert.cpp). The same bits
// as the scalar conversions of core/half.h (half_t, bfloat16_t), NaN payloads included: every copy
// computes them with the same integer and float operations, selects in place of branches.
#pragma once
#include <cstdint>

namespace bm::cpu {

void half_to_float_run(const uint16_t* h, float* f, int64_t n);
void float_to_half_run(const float* f, uint16_t* h, int64_t n);
void bf16_to_float_run(const uint16_t* b, float* f, int64_t n);
void float_to_bf16_run(const float* f, uint16_t* b, int64_t n);

}  // namespace bm::cpu
