#include "cpu/exp_f32.h"

namespace bm::cpu {

namespace {

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

}  // namespace bm::cpu
