#include "cpu/exp_f32.h"

#include <cstring>

namespace bm::cpu {

namespace {

constexpr int kAcc = 16;  // accumulator lanes of the sums (fixed: same order at every width)
constexpr int kBlk = 64;  // exps computed per block before they are added into the lanes
// 16 floats as one value: 4 SSE, 2 AVX2 or 1 AVX-512 register, for the compare-and-select max
// the auto-vectoriser leaves scalar
typedef float V16 __attribute__((vector_size(64)));
constexpr int kJoin = 1024;  // elements summed into the lanes before they join the lane totals

// The row kernels, written once as plain loops over arrays; each is compiled for the baseline and
// (below) for AVX2 / AVX-512, where the vectoriser turns the fixed-lane arrays into registers.
#define BM_SOFTMAX_ROW_KERNELS(ATTR, SFX)                                                           \
  ATTR float max_##SFX(const float* x, int64_t n) {                                                 \
    /* four independent chains so the compare-select latency does not serialise the loop */      \
    V16 acc, a4[4];                                                                                 \
    for (int j = 0; j < kAcc; ++j) acc[j] = x[0];                                                   \
    for (int q = 0; q < 4; ++q) a4[q] = acc;                                                        \
    int64_t i = 0;                                                                                  \
    for (; i + 4 * kAcc <= n; i += 4 * kAcc)                                                        \
      for (int q = 0; q < 4; ++q) {                                                                 \
        V16 v;                                                                                      \
        std::memcpy(&v, x + i + q * kAcc, sizeof(v));                                               \
        a4[q] = ((v > a4[q]) | (v != v)) ? v : a4[q]; /* NaN-propagating */                         \
      }                                                                                             \
    for (int q = 0; q < 4; ++q) acc = ((a4[q] > acc) | (a4[q] != a4[q])) ? a4[q] : acc;             \
    for (; i + kAcc <= n; i += kAcc) {                                                              \
      V16 v;                                                                                        \
      std::memcpy(&v, x + i, sizeof(v));                                                            \
      acc = ((v > acc) | (v != v)) ? v : acc;                                                       \
    }                                                                                               \
    float m = acc[0];                                                                               \
    for (int j = 1; j < kAcc; ++j) m = (acc[j] > m || acc[j] != acc[j]) ? acc[j] : m;               \
    for (; i < n; ++i) m = (x[i] > m || x[i] != x[i]) ? x[i] : m;                                   \
    return m;                                                                                       \
  }                                                                                                 \
  ATTR float exp_sum_##SFX(const float* x, float shift, float* out, int64_t n) {                   \
    float acc[kAcc] = {}, tot[kAcc] = {};                                                           \
    float tmp[kBlk];                                                                                \
    int64_t i = 0;                                                                                  \
    for (; i + kBlk <= n; i += kBlk) {                                                              \
      if (i % kJoin == 0 && i > 0) /* lanes join the total every kJoin: error ~ log, not n */       \
        for (int j = 0; j < kAcc; ++j) tot[j] += acc[j], acc[j] = 0.0f;                              \
      for (int k = 0; k < kBlk; ++k) tmp[k] = exp_f32(x[i + k] - shift);                            \
      if (out)                                                                                      \
        for (int k = 0; k < kBlk; ++k) out[i + k] = tmp[k];                                         \
      for (int k = 0; k < kBlk; k += kAcc)                                                          \
        for (int j = 0; j < kAcc; ++j) acc[j] += tmp[k + j];                                        \
    }                                                                                               \
    if (i < n) { /* the tail as one more (partial) block, still vectorised; zeros add nothing */    \
      const int rem = int(n - i);                                                                   \
      for (int k = 0; k < kBlk; ++k) tmp[k] = 0.0f;                                                 \
      for (int k = 0; k < rem; ++k) tmp[k] = exp_f32(x[i + k] - shift);                             \
      if (out)                                                                                      \
        for (int k = 0; k < rem; ++k) out[i + k] = tmp[k];                                          \
      for (int k = 0; k < kBlk; k += kAcc)                                                          \
        for (int j = 0; j < kAcc; ++j) acc[j] += tmp[k + j];                                        \
    }                                                                                               \
    for (int j = 0; j < kAcc; ++j) acc[j] += tot[j];                                                \
    for (int w = kAcc / 2; w >= 1; w /= 2)                                                          \
      for (int j = 0; j < w; ++j) acc[j] += acc[j + w];                                             \
    return acc[0];                                                                                  \
  }                                                                                                 \
  ATTR void scale_##SFX(float* y, float s, int64_t n) {                                             \
    for (int64_t i = 0; i < n; ++i) y[i] *= s;                                                      \
  }                                                                                                 \
  ATTR void sub2_##SFX(const float* x, float a, float b, float* y, int64_t n) {                     \
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - a) - b;                                          \
  }

BM_SOFTMAX_ROW_KERNELS(, base)

void exp_shifted_base(const float* x, float shift, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = exp_f32(x[i] - shift);
}

#if defined(__x86_64__) && defined(__GNUC__)
// The same loop compiled for AVX2 / AVX-512: the vectoriser uses 32- / 64-byte vectors. Neither
// target enables FMA, so no multiply-add is contracted and the results match exp_shifted_base bit
// for bit.
__attribute__((target("avx2"))) void exp_shifted_avx2(const float* x, float shift, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = exp_f32(x[i] - shift);
}
__attribute__((target("avx512f,prefer-vector-width=512"))) void exp_shifted_avx512(const float* x, float shift,
                                                                                  float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = exp_f32(x[i] - shift);
}
BM_SOFTMAX_ROW_KERNELS(__attribute__((target("avx2"))), avx2)
BM_SOFTMAX_ROW_KERNELS(__attribute__((target("avx512f,prefer-vector-width=512"))), avx512)
#endif

}  // namespace

void exp_shifted_f32(const float* x, float shift, float* out, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const int level = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
  if (level == 2) return exp_shifted_avx512(x, shift, out, n);
  if (level == 1) return exp_shifted_avx2(x, shift, out, n);
#endif
  exp_shifted_base(x, shift, out, n);
}

namespace {
int simd_level() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const int level = __builtin_cpu_supports("avx512f") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
  return level;
#else
  return 0;
#endif
}
}  // namespace

#if defined(__x86_64__) && defined(__GNUC__)
#define BM_PICK(name, ...)                                            \
  do {                                                                \
    const int lv = simd_level();                                      \
    if (lv == 2) return name##_avx512(__VA_ARGS__);                   \
    if (lv == 1) return name##_avx2(__VA_ARGS__);                     \
    return name##_base(__VA_ARGS__);                                  \
  } while (0)
#else
#define BM_PICK(name, ...) return name##_base(__VA_ARGS__)
#endif

float max_f32(const float* x, int64_t n) { BM_PICK(max, x, n); }
float exp_shifted_sum_f32(const float* x, float shift, float* out, int64_t n) { BM_PICK(exp_sum, x, shift, out, n); }
void scale_f32(float* y, float s, int64_t n) { BM_PICK(scale, y, s, n); }
void sub2_f32(const float* x, float a, float b, float* y, int64_t n) { BM_PICK(sub2, x, a, b, y, n); }
#undef BM_PICK

}  // namespace bm::cpu
