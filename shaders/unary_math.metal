// Elementwise math of one tensor: log1p expm1 log2 log10 exp2 erf erfinv frac (floats), sign
// floor ceil round trunc nan_to_num bitwise_not (the input's dtype; floor/ceil/round/trunc leave
// integers unchanged) and isnan isinf isfinite logical_not (bool output). Each functor computes
// exactly what csrc/cpu/unary_math.cpp computes; float16/bfloat16 compute in float32 and round
// once on store. log2, log10, exp2 call metal::precise (libm in the simulator, as the CPU);
// log1p, expm1, erfinv come from math_f32.h and erf from erf.h, shared with the CPU.
//
// Adding an op: one functor below and one line in BM_UNARY_MATH_OPS at the end.
#include <metal_stdlib>
#include "dtypes.h"
#include "elementwise.h"
#include "math_f32.h"
using namespace metal;

// ---- functors: static R apply(C x, constant ElementwiseArgs& p), C = bm_compute<T>::type ----

struct log1p_op {
  static float apply(float x, constant ElementwiseArgs& p) { return bm_log1p(x); }
};
struct expm1_op {
  static float apply(float x, constant ElementwiseArgs& p) { return bm_expm1(x); }
};
struct log2_op {
  static float apply(float x, constant ElementwiseArgs& p) { return precise::log2(x); }
};
struct log10_op {
  static float apply(float x, constant ElementwiseArgs& p) { return precise::log10(x); }
};
struct exp2_op {
  static float apply(float x, constant ElementwiseArgs& p) { return precise::exp2(x); }
};
struct erf_op {
  static float apply(float x, constant ElementwiseArgs& p) { return bm_erf(x); }
};
struct erfinv_op {
  static float apply(float x, constant ElementwiseArgs& p) { return bm_erfinv(x); }
};
// x - trunc(x): frac(-2.0) = +0 and frac(inf) = NaN, as torch.
struct frac_op {
  static float apply(float x, constant ElementwiseArgs& p) { return x - trunc(x); }
};

// Integers (and bool where the row has it) take the template; floats the float overload.
struct floor_op {
  template <typename C>
  static C apply(C x, constant ElementwiseArgs& p) { return x; }
  static float apply(float x, constant ElementwiseArgs& p) { return floor(x); }
};
struct ceil_op {
  template <typename C>
  static C apply(C x, constant ElementwiseArgs& p) { return x; }
  static float apply(float x, constant ElementwiseArgs& p) { return ceil(x); }
};
struct trunc_op {
  template <typename C>
  static C apply(C x, constant ElementwiseArgs& p) { return x; }
  static float apply(float x, constant ElementwiseArgs& p) { return trunc(x); }
};
// Half to even (rint). p.flags: 0 no decimals; 1 decimals > 0: rint(x * ten) / ten; 2 decimals < 0:
// rint(x / ten) * ten, ten = fvalue[0] = 10^|decimals| rounded to float32 by the host.
struct round_op {
  template <typename C>
  static C apply(C x, constant ElementwiseArgs& p) { return x; }
  static float apply(float x, constant ElementwiseArgs& p) {
    const float ten = p.fvalue[0];
    return p.flags == 0 ? rint(x) : (p.flags == 1 ? rint(x * ten) / ten : rint(x / ten) * ten);
  }
};
// +1, -1 or +0; NaN and -0 give +0 (torch); bool keeps its value.
struct sign_op {
  static bool apply(bool x, constant ElementwiseArgs& p) { return x; }
  template <typename C>
  static C apply(C x, constant ElementwiseArgs& p) { return C(int(x > C(0)) - int(x < C(0))); }
  static float apply(float x, constant ElementwiseArgs& p) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f); }
};
// NaN, +inf, -inf := fvalue[0], [1], [2] (the host resolves torch's defaults); integers unchanged.
struct nan_to_num_op {
  template <typename C>
  static C apply(C x, constant ElementwiseArgs& p) { return x; }
  static float apply(float x, constant ElementwiseArgs& p) {
    return isnan(x) ? p.fvalue[0] : (isinf(x) ? (x > 0.0f ? p.fvalue[1] : p.fvalue[2]) : x);
  }
};
struct bitwise_not_op {
  static bool apply(bool x, constant ElementwiseArgs& p) { return !x; }
  template <typename C>
  static C apply(C x, constant ElementwiseArgs& p) { return C(~x); }
};

// Predicates (bool output): an integer is never NaN or infinite; NaN counts as true (nonzero).
struct isnan_op {
  template <typename C>
  static bool apply(C x, constant ElementwiseArgs& p) { return false; }
  static bool apply(float x, constant ElementwiseArgs& p) { return isnan(x); }
};
struct isinf_op {
  template <typename C>
  static bool apply(C x, constant ElementwiseArgs& p) { return false; }
  static bool apply(float x, constant ElementwiseArgs& p) { return isinf(x); }
};
struct isfinite_op {
  template <typename C>
  static bool apply(C x, constant ElementwiseArgs& p) { return true; }
  static bool apply(float x, constant ElementwiseArgs& p) { return isfinite(x); }
};
struct logical_not_op {
  template <typename C>
  static bool apply(C x, constant ElementwiseArgs& p) { return x == C(0); }
};

// ---- kernels: in buffer(0), out buffer(1), args buffer(2); one thread per element. R is the
// output element type: T, or bool for the predicates. ----

// Any layout of up to BM_MAX_DIMS dims (operand 0 = out, 1 = x).
template <typename T, typename R, typename Op>
kernel void math_unary_strided(device const T* x [[buffer(0)]],
                               device R* out [[buffer(1)]],
                               constant ElementwiseArgs& args [[buffer(2)]],
                               uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  typedef typename bm_compute<T>::type C;
  bm_offsets o = bm_strided_offsets(args, gid, 2);
  out[o.v[0]] = R(Op::apply(C(x[o.v[1]]), args));
}

// The fast path: ndim <= 1 (contiguous operands, a broadcast scalar, or a single strided dim).
template <typename T, typename R, typename Op>
kernel void math_unary_1d(device const T* x [[buffer(0)]],
                          device R* out [[buffer(1)]],
                          constant ElementwiseArgs& args [[buffer(2)]],
                          uint gid [[thread_position_in_grid]],
                          uint n [[threads_per_grid]]) {
  typedef typename bm_compute<T>::type C;
  for (uint i0 = gid; long(i0) < args.numel; i0 += BM_EW_PER_THREAD * n) {  // see elementwise.h
    C v[BM_EW_PER_THREAD];
    for (uint k = 0, i = i0; k < BM_EW_PER_THREAD && long(i) < args.numel; ++k, i += n)
      v[k] = C(x[bm_1d_offset(args, i, 1)]);
    for (uint k = 0, i = i0; k < BM_EW_PER_THREAD && long(i) < args.numel; ++k, i += n)
      out[bm_1d_offset(args, i, 0)] = R(Op::apply(v[k], args));
  }
}

// ---- instantiations: "<op>_strided_<dtype>" and "<op>_1d_<dtype>" for the dtypes of each op's row ----

// The integer dtypes and bool (bitwise_not's row).
#define BM_DTYPES_INTEGRAL(X, A) \
  X(bool, bool, A)               \
  BM_DTYPES_INT(X, A)

#define BM_UNARY_MATH_OPS(X) \
  X(log1p, FLOAT)            \
  X(expm1, FLOAT)            \
  X(log2, FLOAT)             \
  X(log10, FLOAT)            \
  X(exp2, FLOAT)             \
  X(erf, FLOAT)              \
  X(erfinv, FLOAT)           \
  X(frac, FLOAT)             \
  X(floor, NUMERIC)          \
  X(ceil, NUMERIC)           \
  X(round, NUMERIC)          \
  X(trunc, NUMERIC)          \
  X(sign, ALL)               \
  X(nan_to_num, ALL)         \
  X(bitwise_not, INTEGRAL)
#define BM_UNARY_PREDICATES(X) \
  X(isnan, ALL)                \
  X(isinf, ALL)                \
  X(isfinite, ALL)             \
  X(logical_not, ALL)

#define BM_MATH_UNARY_INSTANTIATE(T, R, NAME, OP)                                                       \
  template [[host_name(#OP "_strided_" #NAME)]] [[kernel]] decltype(math_unary_strided<T, R, OP##_op>) \
      math_unary_strided<T, R, OP##_op>;                                                                \
  template [[host_name(#OP "_1d_" #NAME)]] [[kernel]] decltype(math_unary_1d<T, R, OP##_op>)           \
      math_unary_1d<T, R, OP##_op>;
#define BM_MATH_SAME_INSTANTIATE(T, NAME, OP) BM_MATH_UNARY_INSTANTIATE(T, T, NAME, OP)
#define BM_MATH_BOOL_INSTANTIATE(T, NAME, OP) BM_MATH_UNARY_INSTANTIATE(T, bool, NAME, OP)
#define BM_MATH_SAME_OP(OP, DTYPES) BM_DTYPES_##DTYPES(BM_MATH_SAME_INSTANTIATE, OP)
#define BM_MATH_BOOL_OP(OP, DTYPES) BM_DTYPES_##DTYPES(BM_MATH_BOOL_INSTANTIATE, OP)
BM_UNARY_MATH_OPS(BM_MATH_SAME_OP)
BM_UNARY_PREDICATES(BM_MATH_BOOL_OP)
