// Elementwise math of one tensor: log1p expm1 log2 log10 exp2 erf erfinv (floats; the dispatcher
// casts bool/int inputs to the default float first), sign floor ceil round trunc frac nan_to_num
// bitwise_not (the input's dtype) and isnan isinf isfinite logical_not (bool output).
// float32 and the half types (computed in float32, rounded once) use the formulas of
// shaders/math_f32.h and erf.h, or the libm function the shader calls (shaders/unary_math.metal):
// the CPU and the simulator give the same bits. float64 uses libm; erfinv refines in double.
#include <cmath>
#include <limits>

#include "cpu/elementwise.h"
#include "cpu/kernels.h"
#include "math_f32.h"  // shaders/math_f32.h

namespace bm::cpu {

namespace {

template <typename C>
constexpr bool is_int_v = std::is_integral_v<C> && !std::is_same_v<C, bool>;

// erfinv in float64: a first guess good to ~1e-7 (the float32 formula, or for 1 - |y| < 1e-7,
// beyond float32's range, the tail's asymptotic form erfc(x) ~ exp(-x^2) / (x sqrt(pi))), then
// Newton steps, each squaring the error: on erf(x) = |y| below 0.5, and on
// log(erfc(x)) = log(1 - |y|) above (1 - |y| is exact there), which keeps the relative precision
// that erf(x) ~ 1 loses and is nearly linear in the far tail.
double erfinv_f64(double y) {
  const double a = std::fabs(y);
  if (!(a < 1.0)) return a == 1.0 ? std::copysign(std::numeric_limits<double>::infinity(), y)
                                  : std::numeric_limits<double>::quiet_NaN();
  const double c = 1.0 - a, k = 1.1283791670955126;  // 2 / sqrt(pi)
  double x;
  if (c >= 1e-7) {
    x = double(bm_erfinv(float(a)));  // float(a) < 1 here
  } else {
    const double l = -std::log(c);
    x = std::sqrt(l);
    for (int i = 0; i < 3; ++i) x = std::sqrt(l - std::log(x * 1.7724538509055160));
  }
  for (int i = 0; i < 4; ++i) {
    if (a < 0.5) {
      x -= (std::erf(x) - a) / (k * std::exp(-x * x));
    } else {
      const double e = std::erfc(x);
      x += (std::log(e) - std::log(c)) * e / (k * std::exp(-x * x));
    }
  }
  return std::copysign(x, y);
}

// The largest finite value of T, nan_to_num's default +inf replacement.
template <typename T>
double max_finite() {
  if constexpr (std::is_same_v<T, half_t>) return 65504.0;
  else if constexpr (std::is_same_v<T, bfloat16_t>) return 3.3895313892515355e38;  // 0x7f7f
  else return double(std::numeric_limits<T>::max());
}

// Runs Op::f on the compute type acc_t<T>; R is the output element type (T, or bool).
template <typename Op, typename T, bool Predicate = false>
struct Unary {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(Op::id)) {
      using C = acc_t<T>;
      using R = std::conditional_t<Predicate, bool, T>;
      map1<R, T>(c, [](T x) { return R(Op::f(C(x))); });
    } else {
      no_kernel(Op::name);
    }
  }
};

#define BM_OP_HEAD(NAME)                       \
  static constexpr const char* name = #NAME;   \
  static constexpr OpId id = OpId::NAME;

// float32 (f32) and float64 (f64) forms of the float-only ops.
#define BM_FLOAT_UNARY(NAME, F32, F64)               \
  struct NAME##_op {                                 \
    BM_OP_HEAD(NAME)                                 \
    static float f(float x) { return F32; }          \
    static double f(double x) { return F64; }        \
  };                                                 \
  template <typename T> using NAME##_kernel = Unary<NAME##_op, T>;

BM_FLOAT_UNARY(log1p, bm_log1p(x), std::log1p(x))
BM_FLOAT_UNARY(expm1, bm_expm1(x), std::expm1(x))
BM_FLOAT_UNARY(log2, std::log2(x), std::log2(x))
BM_FLOAT_UNARY(log10, std::log10(x), std::log10(x))
BM_FLOAT_UNARY(exp2, std::exp2(x), std::exp2(x))
BM_FLOAT_UNARY(erf, bm_erf(x), std::erf(x))
BM_FLOAT_UNARY(erfinv, bm_erfinv(x), erfinv_f64(x))
// frac(x) = x - trunc(x), as torch: frac(-2.0) = +0, frac(inf) = NaN.
BM_FLOAT_UNARY(frac, x - std::trunc(x), x - std::trunc(x))
#undef BM_FLOAT_UNARY

// Ops of every numeric dtype: BODY for floats, INT_BODY for integers (and bool where the row has it).
#define BM_ANY_UNARY(NAME, R, BODY, INT_BODY)                     \
  struct NAME##_op {                                              \
    BM_OP_HEAD(NAME)                                              \
    template <typename C> static R f(C x) {                       \
      if constexpr (std::is_floating_point_v<C>) { BODY; }        \
      else { INT_BODY; }                                          \
    }                                                             \
  };

// floor / ceil / trunc of an integer tensor: the values unchanged, as torch.
BM_ANY_UNARY(floor, C, return std::floor(x), return x)
BM_ANY_UNARY(ceil, C, return std::ceil(x), return x)
BM_ANY_UNARY(trunc, C, return std::trunc(x), return x)
// sign: +1, -1 or +0; NaN and -0 give +0 (torch); bool keeps its value.
BM_ANY_UNARY(sign, C, return x > C(0) ? C(1) : (x < C(0) ? C(-1) : C(0)),
             if constexpr (is_int_v<C>) return C(int(x > C(0)) - int(x < C(0))); else return x)
BM_ANY_UNARY(bitwise_not, C, return x, if constexpr (is_int_v<C>) return C(~x); else return !x)
// The predicates: bool output for any input dtype; an integer is never NaN or infinite.
BM_ANY_UNARY(isnan, bool, return x != x, return false)
BM_ANY_UNARY(isinf, bool, return std::isinf(x), return false)
BM_ANY_UNARY(isfinite, bool, return std::isfinite(x), return true)
BM_ANY_UNARY(logical_not, bool, return x == C(0), return x == C(0))  // NaN is true, so not(NaN) is false
#undef BM_ANY_UNARY

template <typename T> using floor_kernel = Unary<floor_op, T>;
template <typename T> using ceil_kernel = Unary<ceil_op, T>;
template <typename T> using trunc_kernel = Unary<trunc_op, T>;
template <typename T> using sign_kernel = Unary<sign_op, T>;
template <typename T> using bitwise_not_kernel = Unary<bitwise_not_op, T>;
template <typename T> using isnan_kernel = Unary<isnan_op, T, true>;
template <typename T> using isinf_kernel = Unary<isinf_op, T, true>;
template <typename T> using isfinite_kernel = Unary<isfinite_op, T, true>;
template <typename T> using logical_not_kernel = Unary<logical_not_op, T, true>;

// round(x, decimals): half to even (nearbyint in the default rounding mode, as the shader's rint).
// decimals d != 0 scales as torch: nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d
// for d < 0, with 10^|d| rounded to the compute type. Integers are returned unchanged (the op
// layer refuses decimals for them, as torch).
template <typename T>
struct RoundKernel {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(OpId::round)) {
      using C = acc_t<T>;
      if constexpr (std::is_floating_point_v<C>) {
        const int64_t d = c.args->has_s0 ? c.args->s0.i : 0;
        const C ten = C(std::pow(10.0, double(d < 0 ? -d : d)));
        if (d == 0) map1<T, T>(c, [](T x) { return T(std::nearbyint(C(x))); });
        else if (d > 0) map1<T, T>(c, [ten](T x) { return T(std::nearbyint(C(x) * ten) / ten); });
        else map1<T, T>(c, [ten](T x) { return T(std::nearbyint(C(x) / ten) * ten); });
      } else {
        map1<T, T>(c, [](T x) { return x; });
      }
    } else {
      no_kernel("round");
    }
  }
};

// nan_to_num: NaN, +inf and -inf replaced by args.s0 / s1 / s2 where given, else by 0 and the
// dtype's largest / lowest finite value; the replacements are converted to the compute type and
// then to T, as the shader receives them (float32) and stores them. Bool and integers: a copy.
template <typename T>
struct NanToNumKernel {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(OpId::nan_to_num)) {
      using C = acc_t<T>;
      if constexpr (std::is_floating_point_v<C>) {
        const OpArgs& a = *c.args;
        const C nan_v = a.has_s0 ? C(a.s0.f) : C(0);
        const C pos = C(a.has_s1 ? a.s1.f : max_finite<T>());
        const C neg = C(a.has_s2 ? a.s2.f : -max_finite<T>());
        const C inf = std::numeric_limits<C>::infinity();
        map1<T, T>(c, [=](T v) {
          const C x = C(v);
          return x != x ? T(nan_v) : (x == inf ? T(pos) : (x == -inf ? T(neg) : v));
        });
      } else {
        map1<T, T>(c, [](T x) { return x; });
      }
    } else {
      no_kernel("nan_to_num");
    }
  }
};

}  // namespace

void register_unary_math_kernels(Backend& b) {
  register_for_row<log1p_kernel>(b, OpId::log1p);
  register_for_row<expm1_kernel>(b, OpId::expm1);
  register_for_row<log2_kernel>(b, OpId::log2);
  register_for_row<log10_kernel>(b, OpId::log10);
  register_for_row<exp2_kernel>(b, OpId::exp2);
  register_for_row<erf_kernel>(b, OpId::erf);
  register_for_row<erfinv_kernel>(b, OpId::erfinv);
  register_for_row<frac_kernel>(b, OpId::frac);
  register_for_row<floor_kernel>(b, OpId::floor);
  register_for_row<ceil_kernel>(b, OpId::ceil);
  register_for_row<trunc_kernel>(b, OpId::trunc);
  register_for_row<RoundKernel>(b, OpId::round);
  register_for_row<sign_kernel>(b, OpId::sign);
  register_for_row<NanToNumKernel>(b, OpId::nan_to_num);
  register_for_row<bitwise_not_kernel>(b, OpId::bitwise_not);
  register_for_row<isnan_kernel>(b, OpId::isnan);
  register_for_row<isinf_kernel>(b, OpId::isinf);
  register_for_row<isfinite_kernel>(b, OpId::isfinite);
  register_for_row<logical_not_kernel>(b, OpId::logical_not);
}

}  // namespace bm::cpu
