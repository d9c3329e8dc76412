// Elementwise math of two or three tensors: atan2 hypot fmod (the promoted dtype), logical_and /
// or / xor (bool output, any dtype), bitwise_and / or / xor (integers and bool) and lerp (floats).
// The dispatcher has cast the inputs to the compute dtype and broadcast them to the output shape.
// Each functor computes exactly what csrc/cpu/binary_math.cpp computes; float16/bfloat16 compute
// in float32 and round once on store. atan2 and fmod call metal::precise (libm in the simulator,
// as the CPU); hypot comes from math_f32.h, shared with the CPU.
//
// Adding an op: one functor below and one line in BM_BINARY_MATH_OPS at the end.
#include <metal_stdlib>
#include "dtypes.h"
#include "elementwise.h"
#include "math_f32.h"
using namespace metal;

// ---- functors: static R apply(C a, C b), C = bm_compute<T>::type ----

struct atan2_op {
  static float apply(float a, float b) { return precise::atan2(a, b); }
};
struct hypot_op {
  static float apply(float a, float b) { return bm_hypot(a, b); }
};
// C's fmod: the quotient truncated toward zero, the remainder with the dividend's sign. Integers:
// b == -1 gives 0 (INT_MIN % -1 would trap; C(-1) < 0 keeps unsigned types out); a zero divisor
// never gets here (the host raises first) and gives 0. Floats: exact.
struct fmod_op {
  template <typename C>
  static C apply(C a, C b) { return (b == C(0) || (C(-1) < C(0) && b == C(-1))) ? C(0) : C(a % b); }
  static float apply(float a, float b) { return precise::fmod(a, b); }
};
// A value is true when nonzero (NaN included).
struct logical_and_op {
  template <typename C>
  static bool apply(C a, C b) { return a != C(0) && b != C(0); }
};
struct logical_or_op {
  template <typename C>
  static bool apply(C a, C b) { return a != C(0) || b != C(0); }
};
struct logical_xor_op {
  template <typename C>
  static bool apply(C a, C b) { return (a != C(0)) != (b != C(0)); }
};
struct bitwise_and_op {
  template <typename C>
  static C apply(C a, C b) { return C(a & b); }
};
struct bitwise_or_op {
  template <typename C>
  static C apply(C a, C b) { return C(a | b); }
};
struct bitwise_xor_op {
  template <typename C>
  static C apply(C a, C b) { return C(a ^ b); }
};

// ---- kernels: a buffer(0), b buffer(1), out buffer(2), args buffer(3); one thread per element.
// R is the output element type: T, or bool for the logical ops. ----

// Any layout of up to BM_MAX_DIMS dims (operand 0 = out, 1 = a, 2 = b).
template <typename T, typename R, typename Op>
kernel void math_binary_strided(device const T* a [[buffer(0)]],
                                device const T* b [[buffer(1)]],
                                device R* out [[buffer(2)]],
                                constant ElementwiseArgs& args [[buffer(3)]],
                                uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  typedef typename bm_compute<T>::type C;
  bm_offsets o = bm_strided_offsets(args, gid, 3);
  out[o.v[0]] = R(Op::apply(C(a[o.v[1]]), C(b[o.v[2]])));
}

// The fast path: ndim <= 1 (contiguous operands, broadcast scalars, or a single strided dim).
template <typename T, typename R, typename Op>
kernel void math_binary_1d(device const T* a [[buffer(0)]],
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

// lerp(input, end, weight) as torch: input + w (end - input) for |w| < 0.5, else
// end - (end - input)(1 - w) (w = 0 gives input, w = 1 gives end exactly); fused products (fma is
// correctly rounded on every target, so the CPU's std::fma agrees).
inline float bm_lerp(float s, float e, float w) {
  const float d = e - s;
  return fabs(w) < 0.5f ? fma(w, d, s) : fma(-d, 1.0f - w, e);
}

// input buffer(0), end buffer(1), weight buffer(2), out buffer(3), args buffer(4); operand 0 = out,
// 1 = input, 2 = end, 3 = weight.
template <typename T>
kernel void lerp_strided(device const T* s [[buffer(0)]],
                         device const T* e [[buffer(1)]],
                         device const T* w [[buffer(2)]],
                         device T* out [[buffer(3)]],
                         constant ElementwiseArgs& args [[buffer(4)]],
                         uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  bm_offsets o = bm_strided_offsets(args, gid, 4);
  out[o.v[0]] = T(bm_lerp(float(s[o.v[1]]), float(e[o.v[2]]), float(w[o.v[3]])));
}

template <typename T>
kernel void lerp_1d(device const T* s [[buffer(0)]],
                    device const T* e [[buffer(1)]],
                    device const T* w [[buffer(2)]],
                    device T* out [[buffer(3)]],
                    constant ElementwiseArgs& args [[buffer(4)]],
                    uint gid [[thread_position_in_grid]],
                    uint n [[threads_per_grid]]) {
  for (uint i0 = gid; long(i0) < args.numel; i0 += BM_EW_PER_THREAD * n) {  // see elementwise.h
    float v[BM_EW_PER_THREAD];
    for (uint k = 0, i = i0; k < BM_EW_PER_THREAD && long(i) < args.numel; ++k, i += n)
      v[k] = bm_lerp(float(s[bm_1d_offset(args, i, 1)]), float(e[bm_1d_offset(args, i, 2)]),
                     float(w[bm_1d_offset(args, i, 3)]));
    for (uint k = 0, i = i0; k < BM_EW_PER_THREAD && long(i) < args.numel; ++k, i += n)
      out[bm_1d_offset(args, i, 0)] = T(v[k]);
  }
}

// ---- instantiations: "<op>_strided_<dtype>", "<op>_1d_<dtype>" for the dtypes of each op's row ----

// The integer dtypes and bool (the bitwise rows).
#define BM_DTYPES_INTEGRAL(X, A) \
  X(bool, bool, A)               \
  BM_DTYPES_INT(X, A)

#define BM_BINARY_MATH_OPS(X) \
  X(atan2, FLOAT)             \
  X(hypot, FLOAT)             \
  X(fmod, NUMERIC)            \
  X(bitwise_and, INTEGRAL)    \
  X(bitwise_or, INTEGRAL)     \
  X(bitwise_xor, INTEGRAL)
#define BM_BINARY_LOGICAL_OPS(X) \
  X(logical_and, ALL)            \
  X(logical_or, ALL)             \
  X(logical_xor, ALL)

#define BM_MATH_BINARY_INSTANTIATE(T, R, NAME, OP)                                                        \
  template [[host_name(#OP "_strided_" #NAME)]] [[kernel]] decltype(math_binary_strided<T, R, OP##_op>) \
      math_binary_strided<T, R, OP##_op>;                                                                 \
  template [[host_name(#OP "_1d_" #NAME)]] [[kernel]] decltype(math_binary_1d<T, R, OP##_op>)           \
      math_binary_1d<T, R, OP##_op>;
#define BM_MATH_SAME_INSTANTIATE(T, NAME, OP) BM_MATH_BINARY_INSTANTIATE(T, T, NAME, OP)
#define BM_MATH_BOOL_INSTANTIATE(T, NAME, OP) BM_MATH_BINARY_INSTANTIATE(T, bool, NAME, OP)
#define BM_MATH_SAME_OP(OP, DTYPES) BM_DTYPES_##DTYPES(BM_MATH_SAME_INSTANTIATE, OP)
#define BM_MATH_BOOL_OP(OP, DTYPES) BM_DTYPES_##DTYPES(BM_MATH_BOOL_INSTANTIATE, OP)
BM_BINARY_MATH_OPS(BM_MATH_SAME_OP)
BM_BINARY_LOGICAL_OPS(BM_MATH_BOOL_OP)

#define BM_LERP_INSTANTIATE(T, NAME, UNUSED)                                                   \
  template [[host_name("lerp_strided_" #NAME)]] [[kernel]] decltype(lerp_strided<T>) lerp_strided<T>; \
  template [[host_name("lerp_1d_" #NAME)]] [[kernel]] decltype(lerp_1d<T>) lerp_1d<T>;
BM_DTYPES_FLOAT(BM_LERP_INSTANTIATE, _)
