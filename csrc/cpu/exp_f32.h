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

// The softmax row passes, vectorised the same way. Sums use 16 fixed accumulator lanes (element i
// goes to lane i % 16, lanes added pairwise at the end), so the order, and the bits, do not
// depend on the vector width either.
// NaN-propagating maximum of x[0 .. n), n >= 1.
float max_f32(const float* x, int64_t n);
// out[i] = exp_f32(x[i] - shift) (out may equal x, or be null to only sum); returns the sum.
float exp_shifted_sum_f32(const float* x, float shift, float* out, int64_t n);
// y[i] *= s
void scale_f32(float* y, float s, int64_t n);
// y[i] = (x[i] - a) - b (y may equal x)
void sub2_f32(const float* x, float a, float b, float* y, int64_t n);

}  // namespace bm::cpu
