#include "cpu/norm_f32.h"

#include <algorithm>

namespace bm::cpu {

namespace {

// The loop bodies, written once; each target below compiles its own copy (inlined into it).
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

#if defined(__x86_64__) && defined(__GNUC__)
#define BM_NORM_TARGETS 1
// Neither target enables FMA, so nothing is contracted and every width gives the base's bits.
#define BM_AVX2 __attribute__((target("avx2")))
#define BM_AVX512 __attribute__((target("avx512f,prefer-vector-width=512")))
BM_AVX2 void scale_shift_avx2(const float* x, float s, float t, float* o, int64_t n) { scale_shift_body(x, s, t, o, n); }
BM_AVX512 void scale_shift_avx512(const float* x, float s, float t, float* o, int64_t n) {
  scale_shift_body(x, s, t, o, n);
}
BM_AVX2 float sum_avx2(const float* x, int64_t n) { return sum_body(x, n); }
BM_AVX512 float sum_avx512(const float* x, int64_t n) { return sum_body(x, n); }
BM_AVX2 float sq_dev_avx2(const float* x, int64_t n, float mean) { return sq_dev_body(x, n, mean); }
BM_AVX512 float sq_dev_avx512(const float* x, int64_t n, float mean) { return sq_dev_body(x, n, mean); }
BM_AVX2 void normalize_avx2(const float* x, int64_t n, float m, float r, const float* w, const float* b, float* o) {
  normalize_body(x, n, m, r, w, b, o);
}
BM_AVX512 void normalize_avx512(const float* x, int64_t n, float m, float r, const float* w, const float* b,
                                float* o) {
  normalize_body(x, n, m, r, w, b, o);
}
#undef BM_AVX2
#undef BM_AVX512

int level() {
  static const int l = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
  return l;
}
#endif

}  // namespace

void scale_shift_f32(const float* x, float s, float t, float* o, int64_t n) {
#ifdef BM_NORM_TARGETS
  if (level() == 2) return scale_shift_avx512(x, s, t, o, n);
  if (level() == 1) return scale_shift_avx2(x, s, t, o, n);
#endif
  scale_shift_body(x, s, t, o, n);
}

float sum_f32(const float* x, int64_t n) {
#ifdef BM_NORM_TARGETS
  if (level() == 2) return sum_avx512(x, n);
  if (level() == 1) return sum_avx2(x, n);
#endif
  return sum_body(x, n);
}

float sq_dev_sum_f32(const float* x, int64_t n, float mean) {
#ifdef BM_NORM_TARGETS
  if (level() == 2) return sq_dev_avx512(x, n, mean);
  if (level() == 1) return sq_dev_avx2(x, n, mean);
#endif
  return sq_dev_body(x, n, mean);
}

void normalize_f32(const float* x, int64_t n, float mean, float rstd, const float* w, const float* b, float* o) {
#ifdef BM_NORM_TARGETS
  if (level() == 2) return normalize_avx512(x, n, mean, rstd, w, b, o);
  if (level() == 1) return normalize_avx2(x, n, mean, rstd, w, b, o);
#endif
  normalize_body(x, n, mean, rstd, w, b, o);
}

}  // namespace bm::cpu
