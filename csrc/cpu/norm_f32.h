// Dense float32 rows of the normalisation kernels (norm.cpp), compiled once per instruction set
// (csrc/cpu/isa.h) and picked at run time: the same operations in the same order at every width
// (no FMA contraction, sums over 32 fixed accumulators), so every machine computes the same bits.
#pragma once
#include <cstdint>

namespace bm::cpu {

// o[k] = x[k] * s + t (batch_norm's pass over one channel plane).
void scale_shift_f32(const float* x, float s, float t, float* o, int64_t n);

// Sum of x[0..n) and sum of (x[k] - mean)^2, each in blocks of 1024 with 32 accumulators per block.
float sum_f32(const float* x, int64_t n);
float sq_dev_sum_f32(const float* x, int64_t n, float mean);

// o[k] = (x[k] - mean) * rstd [* w[k]] [+ b[k]] (w, b may be null).
void normalize_f32(const float* x, int64_t n, float mean, float rstd, const float* w, const float* b, float* o);

}  // namespace bm::cpu
