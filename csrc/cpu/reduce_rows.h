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

// Short rows, kShortRows at a time: out[r] = sum_contig_f32(rows[r], n) (sum), or
// extreme_contig_f32(rows[r], n, id, is_max) (extreme), for r < kShortRows and 1 <= n <= kShortMax
// (one leaf of the tree), the same bits. On AVX2 / AVX-512 each row's leaf accumulators, then a
// transposing butterfly that joins lane j with lane j + 8, + 4, + 2, + 1 of many rows at once, the
// per-row fold's operations in its order, where one call and one fold per row cost more than a
// short row; other copies go row by row.
constexpr int kShortRows = 16;
constexpr int64_t kShortMax = 256;
void sum_short_rows_f32(const float* const* rows, int64_t n, float* out);
void extreme_short_rows_f32(const float* const* rows, int64_t n, float id, bool is_max, float* out);

}  // namespace bm::cpu
