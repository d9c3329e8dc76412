// gelu_backward, gelu_tanh_backward, silu_backward: out = grad * act'(x) (relu_backward: a select), operands broadcast by
// the dispatcher. float32 (and the half types, computed in float32) use the formulas of
// shaders/activation_grad.h, which shaders/binary.metal runs too, so the CPU and the simulator
// agree bit for bit; contiguous float32 runs in loops compiled for AVX2 / AVX-512 as well as the
// baseline. Compiled with -ffp-contract=off (CMakeLists.txt), as activation_f32.cpp: no width may
// fuse a multiply-add the others round twice. float64 uses libm (erf, erfc, exp).
#include <algorithm>
#include <cmath>

#include "activation_grad.h"  // shaders/activation_grad.h
#include "cpu/elementwise.h"
#include "cpu/kernels.h"

namespace bm::cpu {

namespace {

enum class Grad { gelu, gelu_tanh, silu, relu };

template <Grad K>
inline float grad_f32(float x) {
  if constexpr (K == Grad::gelu) return bm_gelu_grad(x);
  else if constexpr (K == Grad::gelu_tanh) return bm_gelu_tanh_grad(x);
  else if constexpr (K == Grad::silu) return bm_silu_grad(x);
  else return x > 0.0f ? 1.0f : 0.0f;  // relu (unused: relu selects, see apply_f32)
}

template <Grad K>
double grad_f64(double x) {
  if constexpr (K == Grad::relu) {
    return x > 0 ? 1.0 : 0.0;
  } else if constexpr (K == Grad::gelu) {
    const double z = x * 0.70710678118654752440;
    const double cdf = x >= 0 ? 0.5 * (1 + std::erf(z)) : 0.5 * std::erfc(-z);
    return cdf + x * (0.39894228040143267794 * std::exp(-0.5 * x * x));
  } else {
    const double u = K == Grad::silu ? x : 1.59576912160573071176 * (x + 0.044715 * x * x * x);
    const double e = std::exp(-std::abs(u)), r = 1 / (1 + e);
    const double s = u >= 0 ? r : e * r, sm = u >= 0 ? e * r : r;
    if constexpr (K == Grad::silu) return s * (1 + x * sm);
    const double q = s * sm, du = 1.59576912160573071176 * (1 + 0.134145 * x * x);
    return q > 0 ? s + q * (x * du) : s;
  }
}

// out = grad * act'(x); relu_backward selects instead (x is relu's output): grad where x > 0 (or
// NaN), 0 where x <= 0, so an inf or NaN gradient does not turn into NaN at the zeros.
template <Grad K>
inline float apply_f32(float g, float x) {
  if constexpr (K == Grad::relu) return x <= 0.0f ? 0.0f : g;
  else return g * grad_f32<K>(x);
}

template <Grad K>
void loop_base(const float* g, const float* x, float* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply_f32<K>(g[i], x[i]);
}
#if defined(__x86_64__) && defined(__GNUC__)
template <Grad K>
__attribute__((target("avx2,fma"))) void loop_avx2(const float* g, const float* x, float* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply_f32<K>(g[i], x[i]);
}
// GCC only widens to zmm when told to prefer 512-bit vectors; clang does not know that option
// (and would ignore the whole attribute, compiling this copy for the baseline).
#if defined(__clang__)
#define BM_TARGET_AVX512 __attribute__((target("avx512f,fma")))
#else
#define BM_TARGET_AVX512 __attribute__((target("avx512f,fma,prefer-vector-width=512")))
#endif
template <Grad K>
BM_TARGET_AVX512 void loop_avx512(const float* g, const float* x, float* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = apply_f32<K>(g[i], x[i]);
}
#endif

template <Grad K>
void loop(const float* g, const float* x, float* o, int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const int level = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma") ? 2
                           : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
  if (level == 2) return loop_avx512<K>(g, x, o, n);
  if (level == 1) return loop_avx2<K>(g, x, o, n);
#endif
  loop_base<K>(g, x, o, n);
}

template <OpId Id, Grad K>
struct ActBackward {
  template <typename T>
  struct Kernel {
    static void run(const KernelCall& c) {
      if constexpr (row_has<T>(Id) && std::is_same_v<acc_t<T>, float>) {  // float32 and the half types
        for_each_row<3>({c.out, c.in[0], c.in[1]}, [](std::array<char*, 3> p, std::array<int64_t, 3> st, int64_t n) {
          if (std::is_same_v<T, float> && st[0] == 4 && st[1] == 4 && st[2] == 4)
            return loop<K>(reinterpret_cast<const float*>(p[1]), reinterpret_cast<const float*>(p[2]),
                           reinterpret_cast<float*>(p[0]), n);
          // Strided or half: chunks converted to float32 run through the vector loop (the scalar
          // formulas would call libm's fma for every multiply-add on the baseline target).
          constexpr int64_t kChunk = 256;
          float gb[kChunk], xb[kChunk];
          for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
            const int64_t m = std::min(kChunk, n - i0);
            for (int64_t i = 0; i < m; ++i) {
              gb[i] = float(at<T>(p[1], i0 + i, st[1]));
              xb[i] = float(at<T>(p[2], i0 + i, st[2]));
            }
            loop<K>(gb, xb, gb, m);
            for (int64_t i = 0; i < m; ++i) *reinterpret_cast<T*>(p[0] + (i0 + i) * st[0]) = T(gb[i]);
          }
        });
      } else if constexpr (row_has<T>(Id) && std::is_same_v<T, double>) {
        if constexpr (K == Grad::relu) map2<T, T>(c, [](T g, T x) { return x <= 0 ? T(0) : g; });
        else map2<T, T>(c, [](T g, T x) { return g * grad_f64<K>(x); });
      } else {
        no_kernel(op_row(Id).name);
      }
    }
  };
};
template <typename T> using gelu_backward_kernel = ActBackward<OpId::gelu_backward, Grad::gelu>::Kernel<T>;
template <typename T> using gelu_tanh_backward_kernel = ActBackward<OpId::gelu_tanh_backward, Grad::gelu_tanh>::Kernel<T>;
template <typename T> using silu_backward_kernel = ActBackward<OpId::silu_backward, Grad::silu>::Kernel<T>;
template <typename T> using relu_backward_kernel = ActBackward<OpId::relu_backward, Grad::relu>::Kernel<T>;

}  // namespace

void register_act_backward_kernels(Backend& b) {
  register_for_row<gelu_backward_kernel>(b, OpId::gelu_backward);
  register_for_row<gelu_tanh_backward_kernel>(b, OpId::gelu_tanh_backward);
  register_for_row<silu_backward_kernel>(b, OpId::silu_backward);
  register_for_row<relu_backward_kernel>(b, OpId::relu_backward);
}

}  // namespace bm::cpu
