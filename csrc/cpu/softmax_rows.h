// The float32 passes of softmax / log_softmax over one dense row, compiled once per instruction set
// (csrc/cpu/isa.h) and picked at run time. The operations and their order are the same at every
// width (no FMA contraction; sums over 16 fixed accumulator lanes: element i goes to lane i % 16,
// the lanes join their totals every 1024 elements and are added pairwise at the end), so every
// machine computes the same bits. softmax_rows.cpp.
#pragma once
#include <cstdint>

namespace bm::cpu {

// NaN-propagating maximum of x[0 .. n), n >= 1: the first NaN if there is one.
float max_f32(const float* x, int64_t n);
// out[i] = exp(x[i] - shift) (out may equal x, or be null to only sum); returns the sum.
float exp_shifted_sum_f32(const float* x, float shift, float* out, int64_t n);
// y[i] *= s
void scale_f32(float* y, float s, int64_t n);
// y[i] = (x[i] - a) - b (y may equal x)
void sub2_f32(const float* x, float a, float b, float* y, int64_t n);

}  // namespace bm::cpu
