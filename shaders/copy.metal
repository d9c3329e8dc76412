// Strided copy: one thread per element of the destination. The host merges dimensions that are
// contiguous in both tensors first, so the common contiguous case is a one-dimensional loop.
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs.h"
using namespace metal;

template <typename T>
kernel void copy_strided(device const T* in [[buffer(0)]],
                         device T* out [[buffer(1)]],
                         constant CopyStridedArgs& args [[buffer(2)]],
                         uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  long rest = gid;
  long src = args.in_offset, dst = args.out_offset;
  for (int d = args.ndim - 1; d >= 0; --d) {
    long i = rest % args.shape[d];
    rest /= args.shape[d];
    src += i * args.in_strides[d];
    dst += i * args.out_strides[d];
  }
  out[dst] = in[src];
}

#define BM_INSTANTIATE_COPY(T, NAME) \
  template [[host_name("copy_strided_" #NAME)]] [[kernel]] decltype(copy_strided<T>) copy_strided<T>;
BM_FOR_EACH_DTYPE(BM_INSTANTIATE_COPY)

// A float to D. float -> int8/uint8/int16 goes through long and wraps, as the CPU's convert<>() and
// torch's CPU casts: a direct conversion of an out-of-range float (-2.0 to uchar) is undefined.
template <typename D>
inline D cast_from_float(float f) {
  return (sizeof(D) < 4 && !is_same_v<D, bool> && !is_floating_point_v<D>) ? D(long(f)) : D(f);
}

// cast_<src>_<dst>: strided copy with a value conversion. Half types convert through float, as
// the CPU backend's convert<T>() does, so both give the same values.
template <typename S, typename D>
kernel void cast_strided(device const S* in [[buffer(0)]],
                         device D* out [[buffer(1)]],
                         constant CopyStridedArgs& args [[buffer(2)]],
                         uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  long rest = gid;
  long src = args.in_offset, dst = args.out_offset;
  for (int d = args.ndim - 1; d >= 0; --d) {
    long i = rest % args.shape[d];
    rest /= args.shape[d];
    src += i * args.in_strides[d];
    dst += i * args.out_strides[d];
  }
  S v = in[src];
  if (is_floating_point_v<S>) out[dst] = cast_from_float<D>(float(v));
  else out[dst] = D(v);
}

#define BM_CAST_TO(D, DNAME, S, SNAME) \
  template [[host_name("cast_" #SNAME "_" #DNAME)]] [[kernel]] decltype(cast_strided<S, D>) cast_strided<S, D>;
#define BM_CAST_FROM(S, SNAME)        \
  BM_CAST_TO(bool, bool, S, SNAME)    \
  BM_CAST_TO(char, int8, S, SNAME)    \
  BM_CAST_TO(uchar, uint8, S, SNAME)  \
  BM_CAST_TO(short, int16, S, SNAME)  \
  BM_CAST_TO(int, int32, S, SNAME)    \
  BM_CAST_TO(long, int64, S, SNAME)   \
  BM_CAST_TO(half, float16, S, SNAME) \
  BM_CAST_TO(bfloat, bfloat16, S, SNAME) \
  BM_CAST_TO(float, float32, S, SNAME)
BM_FOR_EACH_DTYPE(BM_CAST_FROM)
