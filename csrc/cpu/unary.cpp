// Unary elementwise kernels: neg abs relu clamp (float and int) and exp log sqrt rsqrt sin cos
// tanh sigmoid (float; the dispatcher casts bool/int inputs to float32 first), and the
// activations silu gelu gelu_tanh (floating inputs only, as in torch). float16/bfloat16
// compute in float32 and round once on store.
#include <cmath>
#include <limits>

#include "core/clamp_bound.h"
#include "cpu/activation_f32.h"
#include "cpu/elementwise.h"
#include "cpu/kernels.h"

namespace bm::cpu {

namespace {

// Integer negation and abs wrap around like torch (-INT_MIN == INT_MIN); unsigned arithmetic
// gives that without signed-overflow UB.
template <typename C>
C wrap_neg(C x) {
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(x));
  else return -x;
}

// Runs Op::f (on the compute type acc_t<T>) for every element.
template <typename Op, typename T>
struct Unary {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(Op::id)) {
      using C = acc_t<T>;
      map1<T, T>(c, [](T x) { return T(Op::f(C(x))); });
    } else {
      no_kernel(Op::name);
    }
  }
};

#define BM_UNARY(NAME, BODY)                        \
  struct NAME##_op {                                \
    static constexpr const char* name = #NAME;      \
    static constexpr OpId id = OpId::NAME;          \
    template <typename C> static C f(C x) { BODY; } \
  };                                                \
  template <typename T> using NAME##_kernel = Unary<NAME##_op, T>;

BM_UNARY(neg, return wrap_neg(x))
// std::abs for floats: abs(-0.0) is +0.0.
BM_UNARY(abs, if constexpr (std::is_floating_point_v<C>) return std::abs(x); else return x < C(0) ? wrap_neg(x) : x)
// x < 0 rather than x > 0: NaN and -0.0 pass through unchanged, as in torch.
BM_UNARY(relu, return x < C(0) ? C(0) : x)
BM_UNARY(sqrt, return std::sqrt(x))
BM_UNARY(rsqrt, return C(1) / std::sqrt(x))
#undef BM_UNARY

// exp log sin cos tanh sigmoid silu gelu gelu_tanh. float32 (and the half types, computed in
// float32) use the formulas of shaders/bm_exp_f32.h, bm_log_trig_f32.h and activation.h through
// activation_f32: vectorised on contiguous data and bit-identical to the Metal shaders. float64
// uses libm (exp, log, sin, cos, tanh, erf/erfc).
template <typename C>
C act_f64(Act act, C x) {
  switch (act) {
    case Act::exp: return std::exp(x);
    case Act::log: return std::log(x);
    case Act::sin: return std::sin(x);
    case Act::cos: return std::cos(x);
    case Act::tanh: return std::tanh(x);
    case Act::relu: return x < C(0) ? C(0) : x;
    case Act::sigmoid:
    case Act::silu: {
      // exp of -|x| never overflows, and for x < 0 e/(1+e) keeps its relative precision.
      const C e = std::exp(-std::abs(x)), r = C(1) / (C(1) + e), s = x >= C(0) ? r : e * r;
      return act == Act::sigmoid ? s : x * s;
    }
    case Act::gelu: {
      // x/2 (1 + erf(x/sqrt2)), with erfc(-x/sqrt2) for x < 0 where 1 + erf cancels.
      const C z = x * C(0.70710678118654752440);
      return x >= C(0) ? C(0.5) * x * (C(1) + std::erf(z)) : C(0.5) * x * std::erfc(-z);
    }
    case Act::gelu_tanh: {
      const C u2 = C(2 * 0.79788456080286535588) * (x + C(0.044715) * x * x * x);
      const C e = std::exp(-std::abs(u2)), r = C(1) / (C(1) + e);
      return x * (u2 >= C(0) ? r : e * r);
    }
  }
  return x;
}

template <OpId Id, Act A>
struct ActKernel {
  template <typename T>
  struct K {
    static void run(const KernelCall& c) {
      if constexpr (row_has<T>(Id) && std::is_same_v<acc_t<T>, float>) {  // float32 and the half types
        for_each_row<2>({c.out, c.in[0]}, [](std::array<char*, 2> p, std::array<int64_t, 2> st, int64_t n) {
          if (std::is_same_v<T, float> && st[0] == 4 && st[1] == 4)
            return activation_f32(A, reinterpret_cast<const float*>(p[1]), reinterpret_cast<float*>(p[0]), n);
          f32_chunks<T, 1>({p[1]}, {st[1]}, p[0], st[0], n, [](auto b, int64_t m) { activation_f32(A, b[0], b[0], m); });
        });
      } else if constexpr (row_has<T>(Id) && std::is_same_v<T, double>) {
        map1<T, T>(c, [](T x) { return act_f64(A, x); });
      } else {
        no_kernel(op_row(Id).name);
      }
    }
  };
};
template <typename T> using exp_kernel = ActKernel<OpId::exp, Act::exp>::K<T>;
template <typename T> using log_kernel = ActKernel<OpId::log, Act::log>::K<T>;
template <typename T> using sin_kernel = ActKernel<OpId::sin, Act::sin>::K<T>;
template <typename T> using cos_kernel = ActKernel<OpId::cos, Act::cos>::K<T>;
template <typename T> using tanh_kernel = ActKernel<OpId::tanh, Act::tanh>::K<T>;
template <typename T> using sigmoid_kernel = ActKernel<OpId::sigmoid, Act::sigmoid>::K<T>;
template <typename T> using silu_kernel = ActKernel<OpId::silu, Act::silu>::K<T>;
template <typename T> using gelu_kernel = ActKernel<OpId::gelu, Act::gelu>::K<T>;
template <typename T> using gelu_tanh_kernel = ActKernel<OpId::gelu_tanh, Act::gelu_tanh>::K<T>;
// relu: the floating types through activation_f32's loop like the activations above (compiled for
// AVX2 / AVX-512; this file's own loops are baseline SSE2, and relu_ on an L2-sized ResNet
// activation ran at 0.3-0.6x torch there), the integers through relu_kernel.
template <typename T>
struct ReluKernel {
  static void run(const KernelCall& c) {
    if constexpr (is_float_v<T>) ActKernel<OpId::relu, Act::relu>::K<T>::run(c);
    else relu_kernel<T>::run(c);
  }
};

// clamp(x, min, max) = min(max(x, lo), hi) as torch computes it: a NaN input stays NaN, a NaN
// bound makes every result NaN, and lo > hi gives hi everywhere.
template <typename T>
struct ClampKernel {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(OpId::clamp)) {
      using C = acc_t<T>;
      const OpArgs& a = *c.args;
      const bool has_lo = a.has_s0, has_hi = a.has_s1;
      if constexpr (is_float_v<T>) {
        if ((has_lo && std::isnan(a.s0.f)) || (has_hi && std::isnan(a.s1.f))) {
          map1<T, T>(c, [](T) { return T(std::numeric_limits<C>::quiet_NaN()); });
          return;
        }
      }
      const C lo = has_lo ? clamp_bound<C>(a.s0) : C(0), hi = has_hi ? clamp_bound<C>(a.s1) : C(0);
      if (has_lo && has_hi)
        map1<T, T>(c, [lo, hi](T v) { C x = C(v); x = x < lo ? lo : x; return T(x > hi ? hi : x); });
      else if (has_lo)
        map1<T, T>(c, [lo](T v) { C x = C(v); return T(x < lo ? lo : x); });
      else
        map1<T, T>(c, [hi](T v) { C x = C(v); return T(x > hi ? hi : x); });
    } else {
      no_kernel("clamp");
    }
  }
};

}  // namespace

void register_unary_kernels(Backend& b) {
  register_for_row<neg_kernel>(b, OpId::neg);
  register_for_row<abs_kernel>(b, OpId::abs);
  register_for_row<ReluKernel>(b, OpId::relu);
  register_for_row<ClampKernel>(b, OpId::clamp);
  register_for_row<exp_kernel>(b, OpId::exp);
  register_for_row<log_kernel>(b, OpId::log);
  register_for_row<sqrt_kernel>(b, OpId::sqrt);
  register_for_row<rsqrt_kernel>(b, OpId::rsqrt);
  register_for_row<sin_kernel>(b, OpId::sin);
  register_for_row<cos_kernel>(b, OpId::cos);
  register_for_row<tanh_kernel>(b, OpId::tanh);
  register_for_row<sigmoid_kernel>(b, OpId::sigmoid);
  register_for_row<silu_kernel>(b, OpId::silu);
  register_for_row<gelu_kernel>(b, OpId::gelu);
  register_for_row<gelu_tanh_kernel>(b, OpId::gelu_tanh);
}

}  // namespace bm::cpu
