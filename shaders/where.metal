// where(cond, a, b): a where cond is true, else b. cond is bool; a and b arrive in the promoted
// dtype, all three broadcast to the output shape. A copy of the chosen value, no arithmetic.
#include <metal_stdlib>
#include "dtypes.h"
#include "elementwise.h"
using namespace metal;

// cond buffer(0), a buffer(1), b buffer(2), out buffer(3), args buffer(4). Any layout of up to
// BM_MAX_DIMS dims (operand 0 = out, 1 = cond, 2 = a, 3 = b).
template <typename T>
kernel void where_strided(device const bool* cond [[buffer(0)]],
                          device const T* a [[buffer(1)]],
                          device const T* b [[buffer(2)]],
                          device T* out [[buffer(3)]],
                          constant ElementwiseArgs& args [[buffer(4)]],
                          uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  bm_offsets o = bm_strided_offsets(args, gid, 4);
  out[o.v[0]] = cond[o.v[1]] ? a[o.v[2]] : b[o.v[3]];
}

// The fast path: ndim <= 1 (contiguous operands, broadcast scalars, or a single strided dim).
template <typename T>
kernel void where_1d(device const bool* cond [[buffer(0)]],
                     device const T* a [[buffer(1)]],
                     device const T* b [[buffer(2)]],
                     device T* out [[buffer(3)]],
                     constant ElementwiseArgs& args [[buffer(4)]],
                     uint gid [[thread_position_in_grid]],
                     uint n [[threads_per_grid]]) {
  for (uint i0 = gid; long(i0) < args.numel; i0 += BM_EW_PER_THREAD * n) {  // see elementwise.h
    T v[BM_EW_PER_THREAD];
    for (uint k = 0, i = i0; k < BM_EW_PER_THREAD && long(i) < args.numel; ++k, i += n)
      v[k] = cond[bm_1d_offset(args, i, 1)] ? a[bm_1d_offset(args, i, 2)] : b[bm_1d_offset(args, i, 3)];
    for (uint k = 0, i = i0; k < BM_EW_PER_THREAD && long(i) < args.numel; ++k, i += n)
      out[bm_1d_offset(args, i, 0)] = v[k];
  }
}

#define BM_WHERE_INSTANTIATE(T, NAME)                                                             \
  template [[host_name("where_strided_" #NAME)]] [[kernel]] decltype(where_strided<T>) where_strided<T>; \
  template [[host_name("where_1d_" #NAME)]] [[kernel]] decltype(where_1d<T>) where_1d<T>;
BM_FOR_EACH_DTYPE(BM_WHERE_INSTANTIATE)
