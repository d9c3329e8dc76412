// The loops of norm_f32.h. Compiled once per instruction set (bessemer_isa_variants in
// CMakeLists.txt) with -ffp-contract=off: no multiply-add is fused, so every copy gives the bits
// of the baseline.
#include "cpu/norm_f32.h"

#include <algorithm>
#include <cstdint>

#include "cpu/isa.h"

namespace bm::cpu {
BM_ISA_DECLARE(void scale_shift_row(const float* x, float s, float t, float* o, int64_t n))
BM_ISA_DECLARE(float sum_row(const float* x, int64_t n))
BM_ISA_DECLARE(float sq_dev_row(const float* x, int64_t n, float mean))
BM_ISA_DECLARE(void normalize_row(const float* x, int64_t n, float mean, float rstd, const float* w, const float* b,
                                  float* o))
}

namespace bm::cpu::BM_ISA_NS {

namespace {

// The loop bodies, written once and inlined into the entry points below.
inline void scale_shift_body(const float* x, float s, float t, float* o, int64_t n) {
  for (int64_t k = 0; k < n; ++k) o[k] = x[k] * s + t;
}

// Blocks of kBlock elements, each summed into kAcc independent accumulators: kAcc lanes keep
// several vector adds in flight (one 8-lane chain would wait on the add latency every step), and
// the rounding error grows with kBlock / kAcc + n / kBlock instead of n.
constexpr int64_t kBlock = 1024;
constexpr int kAcc = 32;

template <typename Term>
inline float blocked_sum_body(int64_t n, Term term) {
  float total = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    float s[kAcc] = {};
    int64_t j = b;
    for (; j + kAcc <= e; j += kAcc)
      for (int l = 0; l < kAcc; ++l) s[l] += term(j + l);
    float tail = 0;
    for (; j < e; ++j) tail += term(j);
    for (int w = kAcc / 2; w > 0; w /= 2)  // pairwise: lane l += lane l + w
      for (int l = 0; l < w; ++l) s[l] += s[l + w];
    total += s[0] + tail;
  }
  return total;
}

inline float sum_body(const float* x, int64_t n) {
  return blocked_sum_body(n, [x](int64_t j) { return x[j]; });
}

inline float sq_dev_body(const float* x, int64_t n, float mean) {
  return blocked_sum_body(n, [x, mean](int64_t j) { float d = x[j] - mean; return d * d; });
}

inline void normalize_body(const float* x, int64_t n, float mean, float rstd, const float* w, const float* b,
                           float* o) {
  if (w && b) for (int64_t k = 0; k < n; ++k) o[k] = (x[k] - mean) * rstd * w[k] + b[k];
  else if (w) for (int64_t k = 0; k < n; ++k) o[k] = (x[k] - mean) * rstd * w[k];
  else if (b) for (int64_t k = 0; k < n; ++k) o[k] = (x[k] - mean) * rstd + b[k];
  else for (int64_t k = 0; k < n; ++k) o[k] = (x[k] - mean) * rstd;
}

}  // namespace

void scale_shift_row(const float* x, float s, float t, float* o, int64_t n) { scale_shift_body(x, s, t, o, n); }
float sum_row(const float* x, int64_t n) { return sum_body(x, n); }
float sq_dev_row(const float* x, int64_t n, float mean) { return sq_dev_body(x, n, mean); }
void normalize_row(const float* x, int64_t n, float mean, float rstd, const float* w, const float* b, float* o) {
  normalize_body(x, n, mean, rstd, w, b, o);
}

}  // namespace bm::cpu::BM_ISA_NS

#if BM_ISA_IS_BASE  // the entry points, compiled once
namespace bm::cpu {

void scale_shift_f32(const float* x, float s, float t, float* o, int64_t n) { BM_ISA_CALL(scale_shift_row, x, s, t, o, n); }
float sum_f32(const float* x, int64_t n) { return BM_ISA_CALL(sum_row, x, n); }
float sq_dev_sum_f32(const float* x, int64_t n, float mean) { return BM_ISA_CALL(sq_dev_row, x, n, mean); }
void normalize_f32(const float* x, int64_t n, float mean, float rstd, const float* w, const float* b, float* o) {
  BM_ISA_CALL(normalize_row, x, n, mean, rstd, w, b, o);
}

}  // namespace bm::cpu
#endif
