// gelu_backward, gelu_tanh_backward, silu_backward: out = grad * act'(x) (relu_backward: a select),
// operands broadcast by the dispatcher. float32 (and the half types, computed in float32) use the
// formulas of shaders/activation_grad.h, which shaders/binary.metal runs too, so the CPU and the
// simulator agree bit for bit: activation_grad_f32's loops, compiled per instruction set
// (activation_f32.cpp, csrc/cpu/isa.h). float64 uses libm (erf, erfc, exp).
#include <cmath>

#include "cpu/activation_f32.h"
#include "cpu/elementwise.h"
#include "cpu/kernels.h"

namespace bm::cpu {

namespace {

enum class Grad { gelu, gelu_tanh, silu, relu };

template <Grad K>
double grad_f64(double x) {
  if constexpr (K == Grad::gelu) {
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

// relu_backward selects (x is relu's output): grad where x > 0 (or NaN), 0 where x <= 0, so an
// inf or NaN gradient does not turn into NaN at the zeros.
template <typename T>
inline T relu_grad(T g, T x) {
  return acc_t<T>(x) <= acc_t<T>(0) ? T(0) : g;
}

template <OpId Id, Grad K>
struct ActBackward {
  template <typename T>
  struct Kernel {
    static void run(const KernelCall& c) {
      if constexpr (row_has<T>(Id) && K == Grad::relu && std::is_floating_point_v<acc_t<T>>) {
        map2<T, T>(c, [](T g, T x) { return relu_grad(g, x); });
      } else if constexpr (row_has<T>(Id) && std::is_same_v<acc_t<T>, float>) {  // float32 and the half types
        constexpr ActGrad A = K == Grad::gelu ? ActGrad::gelu : K == Grad::gelu_tanh ? ActGrad::gelu_tanh : ActGrad::silu;
        for_each_row<3>({c.out, c.in[0], c.in[1]}, [](std::array<char*, 3> p, std::array<int64_t, 3> st, int64_t n) {
          if (std::is_same_v<T, float> && st[0] == 4 && st[1] == 4 && st[2] == 4)
            return activation_grad_f32(A, reinterpret_cast<const float*>(p[1]), reinterpret_cast<const float*>(p[2]),
                                       reinterpret_cast<float*>(p[0]), n);
          f32_chunks<T, 2>({p[1], p[2]}, {st[1], st[2]}, p[0], st[0], n,
                           [](auto b, int64_t m) { activation_grad_f32(A, b[0], b[1], b[0], m); });
        });
      } else if constexpr (row_has<T>(Id) && std::is_same_v<T, double>) {
        map2<T, T>(c, [](T g, T x) { return g * grad_f64<K>(x); });
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
