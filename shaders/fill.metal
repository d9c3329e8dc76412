// fill (strided) and arange, one instantiation per dtype.
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs.h"
using namespace metal;

template <typename T>
kernel void fill(device T* out [[buffer(0)]],
                 constant FillArgs& args [[buffer(1)]],
                 uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  long rest = gid;
  long dst = args.offset;
  for (int d = args.ndim - 1; d >= 0; --d) {
    dst += (rest % args.shape[d]) * args.strides[d];
    rest /= args.shape[d];
  }
  // Integer and bool values come exact from ivalue; floating ones from fvalue.
  out[dst] = is_floating_point_v<T> ? T(args.fvalue) : T(args.ivalue);
}

template <typename T>
kernel void arange(device T* out [[buffer(0)]],
                   constant ArangeArgs& args [[buffer(1)]],
                   uint gid [[thread_position_in_grid]]) {
  long i = gid;
  if (i >= args.n) return;
  T v = args.is_int ? T(args.istart + i * args.istep) : T(args.fstart + float(i) * args.fstep);
  out[args.offset + i * args.stride] = v;
}

#define BM_INSTANTIATE_FILL(T, NAME)                                                        \
  template [[host_name("fill_" #NAME)]] [[kernel]] decltype(fill<T>) fill<T>;               \
  template [[host_name("arange_" #NAME)]] [[kernel]] decltype(arange<T>) arange<T>;
BM_FOR_EACH_DTYPE(BM_INSTANTIATE_FILL)
