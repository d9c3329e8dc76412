// Unary elementwise kernels: neg abs relu clamp (integers and floats) and exp log sqrt rsqrt sin
// cos tanh sigmoid (floats; the dispatcher casts bool/int inputs to float32 first). Each op is a
// functor computing exactly what csrc/cpu/unary.cpp computes; float16/bfloat16 compute in float32
// and round once on store. exp log sin cos tanh and the activations use the shared float32
// formulas (bm_exp_f32.h, bm_log_trig_f32.h, activation.h) the CPU runs too; sqrt uses
// metal::precise::, correctly rounded as the CPU's.
//
// Adding an op: one functor below and one line in BM_UNARY_OPS at the end.
#include <metal_stdlib>
#include "dtypes.h"
#include "elementwise.h"
#include "activation.h"
#include "bm_log_trig_f32.h"
using namespace metal;

// ---- functors: static C apply(C x, constant ElementwiseArgs& p), C = bm_compute<T>::type ----

struct neg_op {
  static int apply(int x, constant ElementwiseArgs& p) { return bm_wrap(uint(0) - uint(x)); }  // -INT_MIN wraps
  static long apply(long x, constant ElementwiseArgs& p) { return bm_wrap(ulong(0) - ulong(x)); }
  static float apply(float x, constant ElementwiseArgs& p) { return -x; }
};

struct abs_op {
  static int apply(int x, constant ElementwiseArgs& p) { return x < 0 ? bm_wrap(uint(0) - uint(x)) : x; }
  static long apply(long x, constant ElementwiseArgs& p) { return x < 0 ? bm_wrap(ulong(0) - ulong(x)) : x; }
  static float apply(float x, constant ElementwiseArgs& p) { return fabs(x); }  // abs(-0.0) is +0.0
};

// x < 0 rather than x > 0: NaN and -0.0 pass through unchanged, as in torch.
struct relu_op {
  template <typename C>
  static C apply(C x, constant ElementwiseArgs& p) { return x < C(0) ? C(0) : x; }
};

// clamp(x, lo, hi) = min(max(x, lo), hi) as torch computes it: a NaN input stays NaN, a NaN bound
// makes every result NaN (the host sets BM_CLAMP_NAN and fvalue[0] = NaN), and lo > hi gives hi.
// The host converts the bounds as the CPU does (core/clamp_bound.h: integers saturate).
struct clamp_op {
  template <typename C>
  static C apply(C x, constant ElementwiseArgs& p) {
    if (p.flags & BM_CLAMP_NAN) return C(p.fvalue[0]);
    bool is_float = is_floating_point_v<C>;
    C lo = is_float ? C(p.fvalue[0]) : C(p.ivalue[0]);
    C hi = is_float ? C(p.fvalue[1]) : C(p.ivalue[1]);
    if (p.flags & BM_CLAMP_HAS_LO) x = x < lo ? lo : x;
    if (p.flags & BM_CLAMP_HAS_HI) x = x > hi ? hi : x;
    return x;
  }
};

// exp, log, sin, cos: the formulas of bm_exp_f32.h and bm_log_trig_f32.h, which csrc/cpu/unary.cpp
// runs too (vectorised), so the CPU and the simulator agree bit for bit.
struct exp_op {
  static float apply(float x, constant ElementwiseArgs& p) { return bm_exp_f32(x); }
};
struct log_op {
  static float apply(float x, constant ElementwiseArgs& p) { return bm_log_f32(x); }
};
struct sqrt_op {
  static float apply(float x, constant ElementwiseArgs& p) { return precise::sqrt(x); }
};
// 1 / sqrt(x), both correctly rounded, as on the CPU (precise::rsqrt need not round the same way).
struct rsqrt_op {
  static float apply(float x, constant ElementwiseArgs& p) { return 1.0f / precise::sqrt(x); }
};
struct sin_op {
  static float apply(float x, constant ElementwiseArgs& p) { return bm_sin_f32(x); }
};
struct cos_op {
  static float apply(float x, constant ElementwiseArgs& p) { return bm_cos_f32(x); }
};
// tanh, sigmoid and the activations: the formulas of activation.h, which csrc/cpu/unary.cpp runs
// too, so the CPU and the simulator agree bit for bit (MSL has no erf; precise::exp/tanh would
// differ from the CPU's vectorised exp by an ulp here and there).
struct tanh_op {
  static float apply(float x, constant ElementwiseArgs& p) { return bm_tanh(x); }
};
struct sigmoid_op {
  static float apply(float x, constant ElementwiseArgs& p) { return bm_sigmoid(x); }
};
struct silu_op {
  static float apply(float x, constant ElementwiseArgs& p) { return bm_silu(x); }
};
struct gelu_op {
  static float apply(float x, constant ElementwiseArgs& p) { return bm_gelu(x); }
};
struct gelu_tanh_op {
  static float apply(float x, constant ElementwiseArgs& p) { return bm_gelu_tanh(x); }
};

// ---- kernels: in buffer(0), out buffer(1), args buffer(2); one thread per element ----

// Any layout of up to BM_MAX_DIMS dims (operand 0 = out, 1 = x).
template <typename T, typename Op>
kernel void unary_strided(device const T* x [[buffer(0)]],
                          device T* out [[buffer(1)]],
                          constant ElementwiseArgs& args [[buffer(2)]],
                          uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  typedef typename bm_compute<T>::type C;
  bm_offsets o = bm_strided_offsets(args, gid, 2);
  out[o.v[0]] = T(Op::apply(C(x[o.v[1]]), args));
}

// The fast path: ndim <= 1 (contiguous operands, a broadcast scalar, or a single strided dim).
template <typename T, typename Op>
kernel void unary_1d(device const T* x [[buffer(0)]],
                     device T* out [[buffer(1)]],
                     constant ElementwiseArgs& args [[buffer(2)]],
                     uint gid [[thread_position_in_grid]],
                     uint n [[threads_per_grid]]) {
  typedef typename bm_compute<T>::type C;
  for (uint i0 = gid; long(i0) < args.numel; i0 += BM_EW_PER_THREAD * n) {  // see elementwise.h
    C v[BM_EW_PER_THREAD];
    for (uint k = 0, i = i0; k < BM_EW_PER_THREAD && long(i) < args.numel; ++k, i += n)
      v[k] = C(x[bm_1d_offset(args, i, 1)]);
    for (uint k = 0, i = i0; k < BM_EW_PER_THREAD && long(i) < args.numel; ++k, i += n)
      out[bm_1d_offset(args, i, 0)] = T(Op::apply(v[k], args));
  }
}

// ---- instantiations: "<op>_strided_<dtype>" and "<op>_1d_<dtype>" for the dtypes of each op's row ----

#define BM_UNARY_OPS(X) \
  X(neg, NUMERIC)       \
  X(abs, NUMERIC)       \
  X(relu, NUMERIC)      \
  X(clamp, NUMERIC)     \
  X(exp, FLOAT)         \
  X(log, FLOAT)         \
  X(sqrt, FLOAT)        \
  X(rsqrt, FLOAT)       \
  X(sin, FLOAT)         \
  X(cos, FLOAT)         \
  X(tanh, FLOAT)        \
  X(sigmoid, FLOAT)     \
  X(silu, FLOAT)        \
  X(gelu, FLOAT)        \
  X(gelu_tanh, FLOAT)

#define BM_UNARY_INSTANTIATE(T, NAME, OP)                                                         \
  template [[host_name(#OP "_strided_" #NAME)]] [[kernel]] decltype(unary_strided<T, OP##_op>)   \
      unary_strided<T, OP##_op>;                                                                  \
  template [[host_name(#OP "_1d_" #NAME)]] [[kernel]] decltype(unary_1d<T, OP##_op>) unary_1d<T, OP##_op>;
#define BM_UNARY_OP(OP, DTYPES) BM_DTYPES_##DTYPES(BM_UNARY_INSTANTIATE, OP)
BM_UNARY_OPS(BM_UNARY_OP)
