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
