// Elementwise math of two or three tensors: atan2 hypot fmod (the promoted dtype), logical_and /
// or / xor (bool output, any dtype), bitwise_and / or / xor (integers and bool) and lerp (floats).
// The dispatcher has cast the inputs to the compute dtype and broadcast them to the output shape.
// float32 and the half types compute as shaders/binary_math.metal does (libm's atan2f and fmodf,
// shaders/math_f32.h's hypot, lerp with explicit fma), so the CPU and the simulator agree bit for
// bit; float64 uses libm.
#include <atomic>
#include <cmath>

#include "cpu/elementwise.h"
#include "cpu/kernels.h"
#include "math_f32.h"  // shaders/math_f32.h

namespace bm::cpu {

namespace {

template <typename C>
constexpr bool is_int_v = std::is_integral_v<C> && !std::is_same_v<C, bool>;

// Runs Op::f on the compute type acc_t<T>; R is the output element type (T, or bool).
template <typename Op, typename T, bool Predicate = false>
struct Binary {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(Op::id)) {
      using C = acc_t<T>;
      using R = std::conditional_t<Predicate, bool, T>;
      map2<R, T>(c, [](T a, T b) { return R(Op::f(C(a), C(b))); });
    } else {
      no_kernel(Op::name);
    }
  }
};

#define BM_BINARY_OP(NAME, R, ...)                              \
  struct NAME##_op {                                            \
    static constexpr const char* name = #NAME;                  \
    static constexpr OpId id = OpId::NAME;                      \
    template <typename C> static R f(C a, C b) { __VA_ARGS__; } \
  };

BM_BINARY_OP(atan2, C, return std::atan2(a, b))
BM_BINARY_OP(hypot, C, if constexpr (std::is_same_v<C, float>) return bm_hypot(a, b); else return std::hypot(a, b))
// fmod: the remainder of the division truncated toward zero, with the dividend's sign (C's fmod,
// exact for floats). b == -1 (signed types) is special-cased so INT_MIN % -1 gives 0 instead of
// trapping; b == 0 never reaches here for integers (the kernel raises first) and gives 0 rather
// than UB.
BM_BINARY_OP(fmod, C, if constexpr (is_int_v<C>) return (b == 0 || (std::is_signed_v<C> && b == C(-1))) ? C(0) : C(a % b);
                      else return std::fmod(a, b))
// A value is true when nonzero; NaN is nonzero.
BM_BINARY_OP(logical_and, bool, return a != C(0) && b != C(0))
BM_BINARY_OP(logical_or, bool, return a != C(0) || b != C(0))
BM_BINARY_OP(logical_xor, bool, return (a != C(0)) != (b != C(0)))
BM_BINARY_OP(bitwise_and, C, return C(a & b))
BM_BINARY_OP(bitwise_or, C, return C(a | b))
BM_BINARY_OP(bitwise_xor, C, return C(a ^ b))
#undef BM_BINARY_OP

template <typename T> using atan2_kernel = Binary<atan2_op, T>;
template <typename T> using hypot_kernel = Binary<hypot_op, T>;
template <typename T> using logical_and_kernel = Binary<logical_and_op, T, true>;
template <typename T> using logical_or_kernel = Binary<logical_or_op, T, true>;
template <typename T> using logical_xor_kernel = Binary<logical_xor_op, T, true>;
template <typename T> using bitwise_and_kernel = Binary<bitwise_and_op, T>;
template <typename T> using bitwise_or_kernel = Binary<bitwise_or_op, T>;
template <typename T> using bitwise_xor_kernel = Binary<bitwise_xor_op, T>;

// Integer fmod raises before anything is written when a divisor is zero (torch's behaviour; the op
// layer has checked a Python-number divisor already and set divisor_checked).
template <typename T>
struct FmodKernel {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(OpId::fmod)) {
      if constexpr (is_int_v<T>) {
        if (!c.args->divisor_checked && any_zero<T>(*c.in[1]))
          throw ZeroDivisionError("[fmod] integer division by zero");
      }
      Binary<fmod_op, T>::run(c);
    } else {
      no_kernel("fmod");
    }
  }
};

// lerp(input, end, weight) as torch computes it: input + w (end - input) for |w| < 0.5, else
// end - (end - input)(1 - w), so w = 0 gives input and w = 1 gives end exactly. The products are
// fused (fma, correctly rounded on every target) so the CPU and the shader agree.
template <typename C>
C lerp_one(C s, C e, C w) {
  const C d = e - s;
  return std::fabs(w) < C(0.5) ? std::fma(w, d, s) : std::fma(-d, C(1) - w, e);
}

template <typename T>
struct LerpKernel {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(OpId::lerp)) {
      using C = acc_t<T>;
      for_each_row<4>({c.out, c.in[0], c.in[1], c.in[2]},
                      [](std::array<char*, 4> p, std::array<int64_t, 4> st, int64_t n) {
        constexpr int64_t sz = sizeof(T);
        T* o = reinterpret_cast<T*>(p[0]);
        const T* s = reinterpret_cast<const T*>(p[1]);
        const T* e = reinterpret_cast<const T*>(p[2]);
        if (st[0] == sz && st[1] == sz && st[2] == sz && st[3] == 0) {  // a scalar weight
          const C w = C(*reinterpret_cast<const T*>(p[3]));
          for (int64_t k = 0; k < n; ++k) o[k] = T(lerp_one(C(s[k]), C(e[k]), w));
        } else {
          for (int64_t k = 0; k < n; ++k)
            *reinterpret_cast<T*>(p[0] + k * st[0]) =
                T(lerp_one(C(at<T>(p[1], k, st[1])), C(at<T>(p[2], k, st[2])), C(at<T>(p[3], k, st[3]))));
        }
      });
    } else {
      no_kernel("lerp");
    }
  }
};

}  // namespace

void register_binary_math_kernels(Backend& b) {
  register_for_row<atan2_kernel>(b, OpId::atan2);
  register_for_row<hypot_kernel>(b, OpId::hypot);
  register_for_row<FmodKernel>(b, OpId::fmod);
  register_for_row<logical_and_kernel>(b, OpId::logical_and);
  register_for_row<logical_or_kernel>(b, OpId::logical_or);
  register_for_row<logical_xor_kernel>(b, OpId::logical_xor);
  register_for_row<bitwise_and_kernel>(b, OpId::bitwise_and);
  register_for_row<bitwise_or_kernel>(b, OpId::bitwise_or);
  register_for_row<bitwise_xor_kernel>(b, OpId::bitwise_xor);
  register_for_row<LerpKernel>(b, OpId::lerp);
}

}  // namespace bm::cpu
