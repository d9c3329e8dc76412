// Unary elementwise kernels: neg abs relu clamp (float and int) and exp log sqrt rsqrt sin cos
// tanh sigmoid (float; the dispatcher casts bool/int inputs to float32 first), and the
// activations silu gelu gelu_tanh (floating inputs only, as in torch). float16/bfloat16
// compute in float32 and round once on store.
#include <cmath>
#include <limits>

#include "core/clamp_bound.h"
#include "cpu/exp_f32.h"
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
BM_UNARY(exp, return std::exp(x))
BM_UNARY(log, return std::log(x))
BM_UNARY(sqrt, return std::sqrt(x))
BM_UNARY(rsqrt, return C(1) / std::sqrt(x))
BM_UNARY(sin, return std::sin(x))
BM_UNARY(cos, return std::cos(x))
BM_UNARY(tanh, return std::tanh(x))
// exp of -|x| never overflows, and for x < 0 the result e/(1+e) keeps its relative precision
// (1/(1+exp(-x)) would round tiny results to 0 and overflow exp for x << 0).
BM_UNARY(sigmoid, C e = std::exp(-std::abs(x)); C r = C(1) / (C(1) + e); return x >= C(0) ? r : e * r)
// exp for the activations: float uses exp_f32 (plain arithmetic, so the loops vectorise; libm's
// expf is a scalar call, 30x slower here), double uses libm.
template <typename C>
C act_exp(C x) {
  if constexpr (std::is_same_v<C, float>) return exp_f32(x);
  else return std::exp(x);
}
// silu(x) = x * sigmoid(x), with the stable sigmoid above (no overflow for x << 0).
BM_UNARY(silu, C e = act_exp(-std::abs(x)); C r = C(1) / (C(1) + e); return x * (x >= C(0) ? r : e * r))
// gelu(x) = x * Phi(x) = x/2 * (1 + erf(x/sqrt2)). For x < 0, 1 + erf(x/sqrt2) cancels (at x = -5
// float32 keeps ~3 bits of it), so that side uses erfc(-x/sqrt2), the same value without the
// cancellation (shaders/erf.h follows the same split). float computes in double: rounding x/sqrt2
// to float would cost erfc 2 z^2 ulp in the tail (160 ulp at x = -11.6).
template <typename C>
C gelu_exact(C x) {
  using D = std::conditional_t<std::is_same_v<C, float>, double, C>;
  const D xd = D(x), z = xd * D(0.70710678118654752440);
  return C(xd >= D(0) ? D(0.5) * xd * (D(1) + std::erf(z)) : D(0.5) * xd * std::erfc(-z));
}
BM_UNARY(gelu, return gelu_exact(x))
// The tanh approximation x/2 * (1 + tanh(u)), u = sqrt(2/pi) * (x + 0.044715 x^3), computed as the
// identical x * sigmoid(2u), whose stable form does not cancel for x < 0.
BM_UNARY(gelu_tanh, const C u2 = C(2 * 0.79788456080286535588) * (x + C(0.044715) * x * x * x);
         C e = act_exp(-std::abs(u2)); C r = C(1) / (C(1) + e); return x * (u2 >= C(0) ? r : e * r))
#undef BM_UNARY

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
  register_for_row<relu_kernel>(b, OpId::relu);
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
