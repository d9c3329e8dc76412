// Compiled with -ffp-contract=off (CMakeLists.txt): the AVX2/AVX-512 versions enable FMA, and a
// contracted a * b + c would round differently from the baseline loop and the shaders. The
// explicit fma calls of erf.h are correctly rounded at every width, so every version gives the
// same bits.
#include "cpu/activation_f32.h"

#include "activation.h"  // shaders/activation.h

namespace bm::cpu {

namespace {

template <Act A>
inline float act_one(float x) {
  if constexpr (A == Act::tanh) return bm_tanh(x);
  else if constexpr (A == Act::sigmoid) return bm_sigmoid(x);
  else if constexpr (A == Act::silu) return bm_silu(x);
  else if constexpr (A == Act::gelu) return bm_gelu(x);
  else return bm_gelu_tanh(x);
}

template <Act A>
void loop_base(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = act_one<A>(x[i]);
}

#if defined(__x86_64__) && defined(__GNUC__)
template <Act A>
__attribute__((target("avx2,fma"))) void loop_avx2(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = act_one<A>(x[i]);
}
template <Act A>
__attribute__((target("avx512f,fma,prefer-vector-width=512"))) void loop_avx512(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = act_one<A>(x[i]);
}
#endif

template <Act A>
void run(const float* x, float* out, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const int level = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma") ? 2
                           : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
  if (level == 2) return loop_avx512<A>(x, out, n);
  if (level == 1) return loop_avx2<A>(x, out, n);
#endif
  loop_base<A>(x, out, n);
}

}  // namespace

void activation_f32(Act act, const float* x, float* out, int64_t n) {
  switch (act) {
    case Act::tanh: return run<Act::tanh>(x, out, n);
    case Act::sigmoid: return run<Act::sigmoid>(x, out, n);
    case Act::silu: return run<Act::silu>(x, out, n);
    case Act::gelu: return run<Act::gelu>(x, out, n);
    case Act::gelu_tanh: return run<Act::gelu_tanh>(x, out, n);
  }
}

float activation_f32(Act act, float x) {
  switch (act) {
    case Act::tanh: return act_one<Act::tanh>(x);
    case Act::sigmoid: return act_one<Act::sigmoid>(x);
    case Act::silu: return act_one<Act::silu>(x);
    case Act::gelu: return act_one<Act::gelu>(x);
    case Act::gelu_tanh: return act_one<Act::gelu_tanh>(x);
  }
  return x;
}

}  // namespace bm::cpu
