// Binary elementwise kernels (add sub mul div pow maximum minimum eq ne lt le gt ge) and where.
// The dispatcher has already cast both inputs to the promoted dtype and broadcast them to the
// output shape; comparisons write bool. float16/bfloat16 compute in float32 and round on store.
#include <atomic>
#include <cmath>
#include <type_traits>

#include "cpu/binary_f32.h"
#include "cpu/elementwise.h"
#include "cpu/kernels.h"

namespace bm::cpu {

namespace {

template <typename C>
constexpr bool is_bool_v = std::is_same_v<C, bool>;
template <typename C>
constexpr bool is_int_v = std::is_integral_v<C> && !is_bool_v<C>;
// The unsigned type integer arithmetic wraps in: at least 32 bits, since uint8/uint16 operands
// would be promoted to (signed) int and 65535 * 65535 overflow it.
template <typename C>
using uint_t = std::conditional_t<(sizeof(C) < 4), uint32_t, std::make_unsigned_t<C>>;

// Integer add/sub/mul wrap around like torch; doing them on the unsigned type gives the same bits
// without signed-overflow UB, and still vectorises.
struct add_op {
  static constexpr const char* name = "add";
  static constexpr OpId id = OpId::add;
  template <typename C> static C f(C a, C b) {
    if constexpr (is_bool_v<C>) return a || b;  // torch: bool + bool is logical or
    else if constexpr (is_int_v<C>) return C(uint_t<C>(a) + uint_t<C>(b));
    else return a + b;
  }
};
struct sub_op {
  static constexpr const char* name = "sub";
  static constexpr OpId id = OpId::sub;
  template <typename C> static C f(C a, C b) {
    if constexpr (is_int_v<C>) return C(uint_t<C>(a) - uint_t<C>(b));
    else return a - b;
  }
};
struct mul_op {
  static constexpr const char* name = "mul";
  static constexpr OpId id = OpId::mul;
  template <typename C> static C f(C a, C b) {
    if constexpr (is_bool_v<C>) return a && b;  // torch: bool * bool is logical and
    else if constexpr (is_int_v<C>) return C(uint_t<C>(a) * uint_t<C>(b));
    else return a * b;
  }
};
struct div_op {
  static constexpr const char* name = "div";
  static constexpr OpId id = OpId::div;
  template <typename C> static C f(C a, C b) { return a / b; }
};
// maximum/minimum: a NaN on either side gives NaN (std::max would drop it); otherwise
// std::max/min's choice, which keeps torch's sign of zero (maximum(-0., 0.) == -0.).
struct maximum_op {
  static constexpr const char* name = "maximum";
  static constexpr OpId id = OpId::maximum;
  template <typename C> static C f(C a, C b) {
    if constexpr (is_bool_v<C>) return a || b;
    else if constexpr (is_int_v<C>) return a < b ? b : a;
    else return a != a ? a : b != b ? b : a < b ? b : a;
  }
};
struct minimum_op {
  static constexpr const char* name = "minimum";
  static constexpr OpId id = OpId::minimum;
  template <typename C> static C f(C a, C b) {
    if constexpr (is_bool_v<C>) return a && b;
    else if constexpr (is_int_v<C>) return b < a ? b : a;
    else return a != a ? a : b != b ? b : b < a ? b : a;
  }
};
#define BM_COMPARE(NAME, EXPR)                                   \
  struct NAME##_op {                                             \
    static constexpr const char* name = #NAME;                   \
    static constexpr OpId id = OpId::NAME;                       \
    template <typename C> static bool f(C a, C b) { return EXPR; } \
  };
BM_COMPARE(eq, a == b)
BM_COMPARE(ne, a != b)
BM_COMPARE(lt, a < b)
BM_COMPARE(le, a <= b)
BM_COMPARE(gt, a > b)
BM_COMPARE(ge, a >= b)
#undef BM_COMPARE

// Runs Op on the compute type acc_t<T>; R is the output element type (T, or bool for compares).
template <typename Op, typename T, bool Compare = false>
struct Binary {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(Op::id)) {
      using C = acc_t<T>;
      using R = std::conditional_t<Compare, bool, T>;
      map2<R, T>(c, [](T a, T b) { return R(Op::f(C(a), C(b))); });
    } else {
      no_kernel(Op::name);
    }
  }
};

// add sub mul div: float32 rows that are dense or a broadcast scalar take binary_f32's loops
// (compiled for AVX2 / AVX-512); every other dtype and layout takes Binary's.
template <typename Op, BinF32 B>
struct DenseF32 {
  template <typename T>
  struct K {
    static void run(const KernelCall& c) {
      if constexpr (std::is_same_v<T, float> && row_has<T>(Op::id)) {
        auto f = [](float a, float b) { return Op::f(a, b); };
        using Ptrs = std::array<char*, 3>;
        for_each_row<3>({c.out, c.in[0], c.in[1]}, [&f](Ptrs p, std::array<int64_t, 3> st, int64_t n) {
          const bool dense = st[0] == 4 && (st[1] == 4 || st[1] == 0) && (st[2] == 4 || st[2] == 0) &&
                             (st[1] | st[2]) != 0;
          if (!dense) return map2_row<float, float>(f, p, st, n);
          binary_f32(B, reinterpret_cast<const float*>(p[1]), st[1] / 4, reinterpret_cast<const float*>(p[2]), st[2] / 4,
                     reinterpret_cast<float*>(p[0]), n);
        });
      } else {
        Binary<Op, T>::run(c);
      }
    }
  };
};
template <typename T> using add_kernel = DenseF32<add_op, BinF32::add>::K<T>;
template <typename T> using sub_kernel = DenseF32<sub_op, BinF32::sub>::K<T>;
template <typename T> using mul_kernel = DenseF32<mul_op, BinF32::mul>::K<T>;
template <typename T> using div_kernel = DenseF32<div_op, BinF32::div>::K<T>;
template <typename T> using maximum_kernel = Binary<maximum_op, T>;
template <typename T> using minimum_kernel = Binary<minimum_op, T>;
template <typename T> using eq_kernel = Binary<eq_op, T, true>;
template <typename T> using ne_kernel = Binary<ne_op, T, true>;
template <typename T> using lt_kernel = Binary<lt_op, T, true>;
template <typename T> using le_kernel = Binary<le_op, T, true>;
template <typename T> using gt_kernel = Binary<gt_op, T, true>;
template <typename T> using ge_kernel = Binary<ge_op, T, true>;

// ---- pow ----

// Integer power by repeated squaring, wrapping like torch's integer multiply. e >= 0.
template <typename T>
T int_pow(T base, T e) {
  uint_t<T> r = 1, b = uint_t<T>(base);
  for (uint_t<T> k = uint_t<T>(e); k; k >>= 1) {
    if (k & 1) r *= b;
    b *= b;
  }
  return T(r);
}

template <typename T>
bool any_negative(const Tensor& t) { return any_element<T>(t, [](T x) { return x < T(0); }); }

template <typename T>
struct PowKernel {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(OpId::pow) && is_int_v<T>) {
      // Checked before anything is written, so a failing pow leaves no partial output.
      if (any_negative<T>(*c.in[1]))
        throw ValueError("[pow] integers to negative integer powers are not allowed");
      map2<T, T>(c, [](T a, T b) { return int_pow(a, b); });
    } else if constexpr (row_has<T>(OpId::pow) && is_float_v<T>) {
      using C = acc_t<T>;
      // x ** 2 is the common case (squares in losses and norms): a multiply, correctly rounded
      // like pow, and vectorisable.
      if (is_broadcast_scalar(*c.in[1]) && C(*c.in[1]->data<T>()) == C(2)) {
        map1<T, T>(c, [](T a) { C x = C(a); return T(x * x); });
        return;
      }
      // Per element too, so a tensor of 2s gives the same numbers (and Metal's pow_op agrees).
      map2<T, T>(c, [](T a, T b) { C x = C(a), y = C(b); return T(y == C(2) ? x * x : std::pow(x, y)); });
    } else {
      no_kernel("pow");
    }
  }
};

// ---- floor_divide, remainder (torch's formulas: c10/util/generic_math.h, BinaryOpsKernel.cpp) ----

// Integers: the quotient rounded toward -inf, the remainder with the divisor's sign. b == -1 is
// special-cased so INT_MIN // -1 wraps (as torch) instead of trapping. b == 0 never reaches here
// (the kernel raises first); it gives 0 rather than undefined behaviour.
template <typename C>
C int_floor_divide(C a, C b) {
  if (b == 0) return C(0);
  if (std::is_signed_v<C> && b == C(-1)) return C(uint_t<C>(0) - uint_t<C>(a));  // never 255 of uint8
  const C q = a / b, r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? C(q - 1) : q;
}
template <typename C>
C int_remainder(C a, C b) {
  if (b == 0 || (std::is_signed_v<C> && b == C(-1))) return C(0);
  const C r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? C(r + b) : r;
}
// Floats: from fmod (exact), as torch; a zero divisor gives a / b (inf or nan).
template <typename C>
C float_floor_divide(C a, C b) {
  if (b == C(0)) return a / b;
  const C mod = std::fmod(a, b);
  C div = (a - mod) / b;
  if (mod != C(0) && ((b < C(0)) != (mod < C(0)))) div -= C(1);
  if (div == C(0)) return std::copysign(C(0), a / b);
  C fl = std::floor(div);
  if (div - fl > C(0.5)) fl += C(1);
  return fl;
}
template <typename C>
C float_remainder(C a, C b) {
  C mod = std::fmod(a, b);
  if (mod != C(0) && ((b < C(0)) != (mod < C(0)))) mod += b;
  return mod;
}

struct floor_divide_op {
  static constexpr const char* name = "floor_divide";
  static constexpr OpId id = OpId::floor_divide;
  template <typename C> static C f(C a, C b) {
    if constexpr (is_int_v<C>) return int_floor_divide(a, b);
    else if constexpr (std::is_floating_point_v<C>) return float_floor_divide(a, b);
    else return a;  // bool: not in the row
  }
};
struct remainder_op {
  static constexpr const char* name = "remainder";
  static constexpr OpId id = OpId::remainder;
  template <typename C> static C f(C a, C b) {
    if constexpr (is_int_v<C>) return int_remainder(a, b);
    else if constexpr (std::is_floating_point_v<C>) return float_remainder(a, b);
    else return a;
  }
};

// Integer division raises before anything is written when a divisor is zero (torch's CPU
// behaviour; the op layer has checked a Python-number divisor already).
template <typename Op, typename T>
struct DivisionKernel {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(Op::id)) {
      if constexpr (is_int_v<T>) {
        if (!c.args->divisor_checked && any_zero<T>(*c.in[1]))
          throw ZeroDivisionError(std::string("[") + Op::name + "] integer division by zero");
      }
      using C = acc_t<T>;
      map2<T, T>(c, [](T a, T b) { return T(Op::f(C(a), C(b))); });
    } else {
      no_kernel(Op::name);
    }
  }
};
template <typename T> using floor_divide_kernel = DivisionKernel<floor_divide_op, T>;
template <typename T> using remainder_kernel = DivisionKernel<remainder_op, T>;

// ---- where ----

template <typename T>
struct WhereKernel {
  static void run(const KernelCall& c) {
    for_each_row<4>({c.out, c.in[0], c.in[1], c.in[2]}, [](std::array<char*, 4> p, std::array<int64_t, 4> st, int64_t n) {
      constexpr int64_t sz = sizeof(T);
      T* o = reinterpret_cast<T*>(p[0]);
      const bool* m = reinterpret_cast<const bool*>(p[1]);
      const T* a = reinterpret_cast<const T*>(p[2]);
      const T* b = reinterpret_cast<const T*>(p[3]);
      if (st[0] == sz && st[1] == 1 && st[2] == sz && st[3] == sz) {
        for (int64_t k = 0; k < n; ++k) o[k] = m[k] ? a[k] : b[k];
      } else if (st[0] == sz && st[1] == 1 && st[2] == sz && st[3] == 0) {
        const T bv = *b;
        for (int64_t k = 0; k < n; ++k) o[k] = m[k] ? a[k] : bv;
      } else if (st[0] == sz && st[1] == 1 && st[2] == 0 && st[3] == sz) {
        const T av = *a;
        for (int64_t k = 0; k < n; ++k) o[k] = m[k] ? av : b[k];
      } else {
        for (int64_t k = 0; k < n; ++k)
          *reinterpret_cast<T*>(p[0] + k * st[0]) =
              at<bool>(p[1], k, st[1]) ? at<T>(p[2], k, st[2]) : at<T>(p[3], k, st[3]);
      }
    });
  }
};

}  // namespace

void register_binary_kernels(Backend& b) {
  register_for_row<add_kernel>(b, OpId::add);
  register_for_row<sub_kernel>(b, OpId::sub);
  register_for_row<mul_kernel>(b, OpId::mul);
  register_for_row<div_kernel>(b, OpId::div);
  register_for_row<PowKernel>(b, OpId::pow);
  register_for_row<maximum_kernel>(b, OpId::maximum);
  register_for_row<minimum_kernel>(b, OpId::minimum);
  register_for_row<eq_kernel>(b, OpId::eq);
  register_for_row<ne_kernel>(b, OpId::ne);
  register_for_row<lt_kernel>(b, OpId::lt);
  register_for_row<le_kernel>(b, OpId::le);
  register_for_row<gt_kernel>(b, OpId::gt);
  register_for_row<ge_kernel>(b, OpId::ge);
  register_for_row<WhereKernel>(b, OpId::where);
  register_for_row<floor_divide_kernel>(b, OpId::floor_divide);
  register_for_row<remainder_kernel>(b, OpId::remainder);
}

}  // namespace bm::cpu
