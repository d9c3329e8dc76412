// float32 amax / amin (and sum) loops of the reduce engine (reduce_engine.h), compiled once per instruction
// set (csrc/cpu/isa.h): the compare-and-select of the NaN-propagating max takes six SSE2
// instructions per four lanes, one vector max (plus a NaN check) per eight or sixteen lanes here.
// They combine in exactly the order of tree_reduce_contig / reduce_cols, so results are the same
// bits as the generic loops on every machine. reduce_rows.cpp.
#pragma once
#include <cstdint>

namespace bm::cpu {

// tree_reduce_contig<float> of x[0 .. n) with Extreme<kMax>::comb and identity id.
float extreme_contig_f32(const float* x, int64_t n, float id, bool is_max);
// acc[j] = Extreme<kMax>::comb(acc[j], x[j]) for j < w.
void extreme_cols_f32(float* acc, const float* x, int64_t w, bool is_max);
// tree_reduce_contig<float> of x[0 .. n) with + and identity 0: float32 sum and mean rows. The
// generic loop is baseline SSE2 code whose every leaf of 256 ended in a stored array and scalar
// adds; the same additions in the same order, so the same bits.
float sum_contig_f32(const float* x, int64_t n);

}  // namespace bm::cpu
