// exp for float32 written with plain arithmetic and selects, so loops calling it vectorise (libm's
// expf is a scalar call): bm_exp_f32 from shaders/exp_f32.h, the formula the shaders use too.
#pragma once
#include <cstdint>

#include "bm_exp_f32.h"  // shaders/bm_exp_f32.h: the formula, shared with the Metal shaders

namespace bm::cpu {

inline float exp_f32(float x) { return bm_exp_f32(x); }

// out[i] = exp_f32(x[i] - shift) for i < n (out may equal x). Runs 16 / 8 lanes wide where the
// CPU has AVX-512 / AVX2; the operations and their order are the same at every width (no FMA), so
// the results are bit-identical on every x86-64 machine. exp_f32.cpp.
void exp_shifted_f32(const float* x, float shift, float* out, int64_t n);

}  // namespace bm::cpu
