// Binary elementwise kernels: add sub mul div pow maximum minimum, and the comparisons eq ne lt le
// gt ge (bool output). The dispatcher has cast both inputs to the promoted dtype and broadcast them
// to the output shape. Each op is a functor computing exactly what csrc/cpu/binary.cpp computes;
// float16/bfloat16 compute in float32 and round once on store.
//
// Adding an op: one functor below and one line in BM_ARITH_OPS or BM_COMPARE_OPS at the end.
#include <metal_stdlib>
#include "dtypes.h"
#include "elementwise.h"
#include "activation_grad.h"
using namespace metal;

// ---- functors: static R apply(C a, C b), C = bm_compute<T>::type ----
// Integer add/sub/mul wrap around like torch; bool + is or, bool * is and (torch).

struct add_op {
  static bool apply(bool a, bool b) { return a || b; }
  static int apply(int a, int b) { return bm_wrap(uint(a) + uint(b)); }
  static long apply(long a, long b) { return bm_wrap(ulong(a) + ulong(b)); }
  static float apply(float a, float b) { return a + b; }
};
struct sub_op {
  static int apply(int a, int b) { return bm_wrap(uint(a) - uint(b)); }
  static long apply(long a, long b) { return bm_wrap(ulong(a) - ulong(b)); }
  static float apply(float a, float b) { return a - b; }
};
struct mul_op {
  static bool apply(bool a, bool b) { return a && b; }
  static int apply(int a, int b) { return bm_wrap(uint(a) * uint(b)); }
  static long apply(long a, long b) { return bm_wrap(ulong(a) * ulong(b)); }
  static float apply(float a, float b) { return a * b; }
};
struct div_op {
  static float apply(float a, float b) { return a / b; }
};

// Integer power by repeated squaring, wrapping like torch's integer multiply. The host has checked
// that no exponent is negative (pow_check_negative below) before launching.
template <typename U>
inline U bm_int_pow(U base, U e) {
  U r = 1;
  for (; e != 0; e >>= 1) {
    if (e & 1) r *= base;
    base *= base;
  }
  return r;
}
struct pow_op {
  static int apply(int a, int b) { return bm_wrap(bm_int_pow(uint(a), uint(b))); }
  static long apply(long a, long b) { return bm_wrap(bm_int_pow(ulong(a), ulong(b))); }
  // x ** 2 (squares in losses and norms) is a multiply: correctly rounded, as on the CPU.
  static float apply(float a, float b) { return b == 2.0f ? a * a : precise::pow(a, b); }
};

// floor_divide / remainder: csrc/cpu/binary.cpp's formulas (torch's). Integers: the quotient
// rounded toward -inf, the remainder with the divisor's sign; b == -1 is special-cased so INT_MIN
// // -1 wraps; a zero divisor never gets here (the host raises first) and gives 0. Floats: from
// fmod, which is exact; a zero divisor gives a / b (inf or nan).
struct floor_divide_op {
  static int apply(int a, int b) {
    if (b == 0) return 0;
    if (b == -1) return bm_wrap(uint(0) - uint(a));
    int q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
  }
  static long apply(long a, long b) {
    if (b == 0) return 0;
    if (b == -1) return bm_wrap(ulong(0) - ulong(a));
    long q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
  }
  static float apply(float a, float b) {
    if (b == 0.0f) return a / b;
    float mod = precise::fmod(a, b);
    float div = (a - mod) / b;
    if (mod != 0.0f && ((b < 0.0f) != (mod < 0.0f))) div -= 1.0f;
    if (div == 0.0f) return copysign(0.0f, a / b);
    float fl = floor(div);
    if (div - fl > 0.5f) fl += 1.0f;
    return fl;
  }
};
struct remainder_op {
  static int apply(int a, int b) {
    if (b == 0 || b == -1) return 0;
    int r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  }
  static long apply(long a, long b) {
    if (b == 0 || b == -1) return 0;
    long r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  }
  static float apply(float a, float b) {
    float mod = precise::fmod(a, b);
    if (mod != 0.0f && ((b < 0.0f) != (mod < 0.0f))) mod += b;
    return mod;
  }
};

// A NaN on either side gives NaN (MSL's fmax/fmin would drop it); otherwise the CPU's choice,
// which keeps torch's sign of zero (maximum(-0., 0.) == -0.).
struct maximum_op {
  static bool apply(bool a, bool b) { return a || b; }
  template <typename C>
  static C apply(C a, C b) { return a < b ? b : a; }
  static float apply(float a, float b) { return isnan(a) ? a : isnan(b) ? b : a < b ? b : a; }
};
struct minimum_op {
  static bool apply(bool a, bool b) { return a && b; }
  template <typename C>
  static C apply(C a, C b) { return b < a ? b : a; }
  static float apply(float a, float b) { return isnan(a) ? a : isnan(b) ? b : b < a ? b : a; }
};

struct eq_op {
  template <typename C> static bool apply(C a, C b) { return a == b; }
};
struct ne_op {
  template <typename C> static bool apply(C a, C b) { return a != b; }
};
struct lt_op {
  template <typename C> static bool apply(C a, C b) { return a < b; }
};
struct le_op {
  template <typename C> static bool apply(C a, C b) { return a <= b; }
};
struct gt_op {
  template <typename C> static bool apply(C a, C b) { return a > b; }
};
struct ge_op {
  template <typename C> static bool apply(C a, C b) { return a >= b; }
};

// Activation gradients (h2): grad * act'(x), a = grad, b = x; the formulas of activation_grad.h,
// which csrc/cpu/act_backward.cpp runs too (bit-identical on the CPU and the simulator).
struct gelu_backward_op {
  static float apply(float g, float x) { return g * bm_gelu_grad(x); }
};
struct gelu_tanh_backward_op {
  static float apply(float g, float x) { return g * bm_gelu_tanh_grad(x); }
};
struct silu_backward_op {
  static float apply(float g, float x) { return g * bm_silu_grad(x); }
};
// relu_backward: b is relu's output; a select, so inf/NaN gradients pass unchanged where out > 0.
struct relu_backward_op {
  static float apply(float g, float x) { return x <= 0.0f ? 0.0f : g; }
};

// ---- kernels: a buffer(0), b buffer(1), out buffer(2), args buffer(3); one thread per element.
// R is the output element type: T, or bool for comparisons. ----

// Any layout of up to BM_MAX_DIMS dims (operand 0 = out, 1 = a, 2 = b).
template <typename T, typename R, typename Op>
kernel void binary_strided(device const T* a [[buffer(0)]],
                           device const T* b [[buffer(1)]],
                           device R* out [[buffer(2)]],
                           constant ElementwiseArgs& args [[buffer(3)]],
                           uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  typedef typename bm_compute<T>::type C;
  bm_offsets o = bm_strided_offsets(args, gid, 3);
  out[o.v[0]] = R(Op::apply(C(a[o.v[1]]), C(b[o.v[2]])));
}

// The fast path: ndim <= 1 (contiguous operands, broadcast scalars such as the 2 in `x + 2`, or a
// single strided dim).
template <typename T, typename R, typename Op>
kernel void binary_1d(device const T* a [[buffer(0)]],
                      device const T* b [[buffer(1)]],
                      device R* out [[buffer(2)]],
                      constant ElementwiseArgs& args [[buffer(3)]],
                      uint gid [[thread_position_in_grid]],
                      uint n [[threads_per_grid]]) {
  typedef typename bm_compute<T>::type C;
  for (uint i0 = gid; long(i0) < args.numel; i0 += BM_EW_PER_THREAD * n) {  // see elementwise.h
    C va[BM_EW_PER_THREAD], vb[BM_EW_PER_THREAD];
    for (uint k = 0, i = i0; k < BM_EW_PER_THREAD && long(i) < args.numel; ++k, i += n) {
      va[k] = C(a[bm_1d_offset(args, i, 1)]);
      vb[k] = C(b[bm_1d_offset(args, i, 2)]);
    }
    for (uint k = 0, i = i0; k < BM_EW_PER_THREAD && long(i) < args.numel; ++k, i += n)
      out[bm_1d_offset(args, i, 0)] = R(Op::apply(va[k], vb[k]));
  }
}

// Integer pow's error check, run (and waited for) before the pow launch: sets *flag when any
// exponent in the launch's layout is negative (operand 0 = the exponent; the host collapses its
// broadcast dims so each distinct element is read once).
template <typename T>
kernel void pow_check_negative(device const T* e [[buffer(0)]],
                               device atomic_int* flag [[buffer(1)]],
                               constant ElementwiseArgs& args [[buffer(2)]],
                               uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  bm_offsets o = bm_strided_offsets(args, gid, 1);
  if (e[o.v[0]] < T(0)) atomic_store_explicit(flag, 1, memory_order_relaxed);
}

// floor_divide / remainder's check, as pow_check_negative: sets *flag when any divisor is zero.
template <typename T>
kernel void divisor_check_zero(device const T* e [[buffer(0)]],
                               device atomic_int* flag [[buffer(1)]],
                               constant ElementwiseArgs& args [[buffer(2)]],
                               uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  bm_offsets o = bm_strided_offsets(args, gid, 1);
  if (e[o.v[0]] == T(0)) atomic_store_explicit(flag, 1, memory_order_relaxed);
}

// ---- instantiations: "<op>_strided_<dtype>", "<op>_1d_<dtype>" for the dtypes of each op's row ----

#define BM_ARITH_OPS(X) \
  X(add, ALL)           \
  X(sub, NUMERIC)       \
  X(mul, ALL)           \
  X(div, FLOAT)         \
  X(pow, NUMERIC)       \
  X(maximum, ALL)       \
  X(minimum, ALL)       \
  X(gelu_backward, FLOAT) \
  X(gelu_tanh_backward, FLOAT) \
  X(silu_backward, FLOAT) \
  X(relu_backward, FLOAT) \
  X(floor_divide, NUMERIC) \
  X(remainder, NUMERIC)
#define BM_COMPARE_OPS(X) \
  X(eq, ALL)              \
  X(ne, ALL)              \
  X(lt, ALL)              \
  X(le, ALL)              \
  X(gt, ALL)              \
  X(ge, ALL)

#define BM_BINARY_INSTANTIATE(T, R, NAME, OP)                                                      \
  template [[host_name(#OP "_strided_" #NAME)]] [[kernel]] decltype(binary_strided<T, R, OP##_op>) \
      binary_strided<T, R, OP##_op>;                                                               \
  template [[host_name(#OP "_1d_" #NAME)]] [[kernel]] decltype(binary_1d<T, R, OP##_op>)           \
      binary_1d<T, R, OP##_op>;
#define BM_ARITH_INSTANTIATE(T, NAME, OP) BM_BINARY_INSTANTIATE(T, T, NAME, OP)
#define BM_COMPARE_INSTANTIATE(T, NAME, OP) BM_BINARY_INSTANTIATE(T, bool, NAME, OP)
#define BM_ARITH_OP(OP, DTYPES) BM_DTYPES_##DTYPES(BM_ARITH_INSTANTIATE, OP)
#define BM_COMPARE_OP(OP, DTYPES) BM_DTYPES_##DTYPES(BM_COMPARE_INSTANTIATE, OP)
BM_ARITH_OPS(BM_ARITH_OP)
BM_COMPARE_OPS(BM_COMPARE_OP)

#define BM_POW_CHECK_INSTANTIATE(T, NAME, UNUSED)                                             \
  template [[host_name("pow_check_negative_" #NAME)]] [[kernel]] decltype(pow_check_negative<T>) \
      pow_check_negative<T>;
BM_DTYPES_INT(BM_POW_CHECK_INSTANTIATE, _)

#define BM_DIVISOR_CHECK_INSTANTIATE(T, NAME, UNUSED)                                             \
  template [[host_name("divisor_check_zero_" #NAME)]] [[kernel]] decltype(divisor_check_zero<T>) \
      divisor_check_zero<T>;
BM_DTYPES_INT(BM_DIVISOR_CHECK_INSTANTIATE, _)
