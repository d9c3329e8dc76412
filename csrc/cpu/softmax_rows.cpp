// The row passes of softmax_rows.h, written as plain loops over fixed-size lane arrays that the
// vectoriser turns into registers. Compiled once per instruction set (bessemer_isa_variants in
// CMakeLists.txt) with -ffp-contract=off.
#include "cpu/softmax_rows.h"

#include <cmath>  // before bm_exp_f32.h, which is included inside a namespace below
#include <cstdint>
#include <cstring>

#include "cpu/isa.h"

namespace bm::cpu {
BM_ISA_DECLARE(float max_row(const float* x, int64_t n))
BM_ISA_DECLARE(float exp_sum_row(const float* x, float shift, float* out, int64_t n))
BM_ISA_DECLARE(void scale_row(float* y, float s, int64_t n))
BM_ISA_DECLARE(void sub2_row(const float* x, float a, float b, float* y, int64_t n))
}

namespace bm::cpu::BM_ISA_NS {

#include "bm_exp_f32.h"  // inside the namespace: this copy's own exp (see isa.h)

namespace {
constexpr int kAcc = 16;    // accumulator lanes of the sums (fixed: the same order at every width)
constexpr int kBlk = 64;    // elements per block of the exp-sum
constexpr int kJoin = 1024; // elements summed into the lanes before they join the lane totals

// One block of kBlk exps into the lane sums; kNormal: exp's normal-range form (the same bits where
// every x - shift is within [-86, 86]).
template <bool kOut, bool kNormal>
inline void exp_block(const float* x, float shift, float* out, float* acc) {
  for (int k = 0; k < kBlk; k += kAcc)
    for (int j = 0; j < kAcc; ++j) {
      const float d = x[k + j] - shift;
      const float e = kNormal ? bm_exp_f32_normal(d) : bm_exp_f32(d);
      if constexpr (kOut) out[k + j] = e;
      acc[j] += e;
    }
}

template <bool kOut>
float exp_sum(const float* x, float shift, float* out, int64_t n) {
  float acc[kAcc] = {}, tot[kAcc] = {};
  const bm_u32 normal_limit = bm_u32(bm_float_bits(86.0f));
  int64_t i = 0;
  for (; i + kBlk <= n; i += kBlk) {
    if (i % kJoin == 0 && i > 0)  // lanes join the total every kJoin: error ~ log n, not n
      for (int j = 0; j < kAcc; ++j) tot[j] += acc[j], acc[j] = 0.0f;
    // The largest |x - shift| of the block, from the bits (a NaN's exceed the limit's): blocks whose
    // values all lie within 86 of the row's max, nearly all, take exp's faster normal-range form.
    bm_u32 top = 0;
    for (int k = 0; k < kBlk; ++k) {
      const bm_u32 b = bm_u32(bm_float_bits(x[i + k] - shift)) & 0x7fffffffu;
      top = top > b ? top : b;
    }
    // (out is null without kOut)
    if (top <= normal_limit) exp_block<kOut, true>(x + i, shift, kOut ? out + i : out, acc);
    else exp_block<kOut, false>(x + i, shift, kOut ? out + i : out, acc);
  }
  if (i < n) {  // the tail as one more (partial) block, zeros added past the end
    const int rem = int(n - i);
    float tmp[kBlk];
    for (int k = 0; k < kBlk; ++k) tmp[k] = 0.0f;
    for (int k = 0; k < rem; ++k) tmp[k] = bm_exp_f32(x[i + k] - shift);
    if constexpr (kOut)
      for (int k = 0; k < rem; ++k) out[i + k] = tmp[k];
    for (int k = 0; k < kBlk; k += kAcc)
      for (int j = 0; j < kAcc; ++j) acc[j] += tmp[k + j];
  }
  for (int j = 0; j < kAcc; ++j) acc[j] += tot[j];
  for (int w = kAcc / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
  return acc[0];
}
}  // namespace

// max as v > m ? v : m (one vector max instruction) in 32 lanes, with NaNs only counted alongside:
// the rare row holding one is scanned again for the first.
float max_row(const float* x, int64_t n) {
  constexpr int kL = 32;
  float m[kL];
  int nan[kL] = {};
  for (int j = 0; j < kL; ++j) m[j] = x[0];
  int64_t i = 0;
  for (; i + kL <= n; i += kL)
    for (int j = 0; j < kL; ++j) {
      const float v = x[i + j];
      m[j] = v > m[j] ? v : m[j];
      nan[j] |= v != v;
    }
  float r = m[0];
  int any = nan[0];
  for (int j = 1; j < kL; ++j) r = m[j] > r ? m[j] : r, any |= nan[j];
  for (; i < n; ++i) r = x[i] > r ? x[i] : r, any |= x[i] != x[i];
  if (any || r != r)
    for (int64_t k = 0; k < n; ++k)
      if (x[k] != x[k]) return x[k];
  return r;
}

float exp_sum_row(const float* x, float shift, float* out, int64_t n) {
  return out ? exp_sum<true>(x, shift, out, n) : exp_sum<false>(x, shift, nullptr, n);
}

void scale_row(float* y, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

void sub2_row(const float* x, float a, float b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - a) - b;
}

}  // namespace bm::cpu::BM_ISA_NS

#if BM_ISA_IS_BASE  // the entry points, compiled once
namespace bm::cpu {
float max_f32(const float* x, int64_t n) { return BM_ISA_CALL(max_row, x, n); }
float exp_shifted_sum_f32(const float* x, float shift, float* out, int64_t n) {
  return BM_ISA_CALL(exp_sum_row, x, shift, out, n);
}
void scale_f32(float* y, float s, int64_t n) { BM_ISA_CALL(scale_row, y, s, n); }
void sub2_f32(const float* x, float a, float b, float* y, int64_t n) { BM_ISA_CALL(sub2_row, x, a, b, y, n); }
}  // namespace bm::cpu
#endif
