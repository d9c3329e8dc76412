// 2-D pooling (PoolArgs), one thread per output element, input read through its strides.
//
// Windows follow torch exactly (csrc/cpu/pool.cpp computes the same numbers in two passes):
//   max_pool2d           max over the window's in-bounds elements (padding is -inf, never wins); a
//                        NaN anywhere in the window gives NaN; a window that dilation made miss
//                        every input element gives -inf (the lowest value for integers);
//   avg_pool2d           sum over the in-bounds elements / (divisor, or the window's size clipped
//                        to the padded input, or its in-bounds count without count_include_pad);
//   adaptive_avg_pool2d  mean over [floor(i * H / OH), ceil((i + 1) * H / OH)) x (same for W).
// Half types and sums accumulate in float; integers compare as themselves.
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs.h"
using namespace metal;

// The output element's (plane base offsets, oh, ow) for thread gid of this launch.
struct PoolPos {
  long in_base;
  long out_at;
  long oh;
  long ow;
};

inline PoolPos pool_position(constant PoolArgs& a, uint gid) {
  PoolPos p;
  p.ow = long(gid) % a.OW;
  const long r = long(gid) / a.OW;
  p.oh = r % a.OH;
  const long plane = r / a.OH + a.plane_base;
  const long n = plane / a.C, c = plane % a.C;
  p.in_base = a.in_offset + n * a.in_strides[0] + c * a.in_strides[1];
  p.out_at = a.out_offset + n * a.out_strides[0] + c * a.out_strides[1] + p.oh * a.out_strides[2] +
             p.ow * a.out_strides[3];
  return p;
}

inline long pool_min(long x, long y) { return x < y ? x : y; }

template <typename T>
kernel void max_pool2d(device const T* in [[buffer(0)]],
                       device T* out [[buffer(1)]],
                       constant PoolArgs& a [[buffer(2)]],
                       uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_out) return;
  // int8/uint8/int16 compare as int, so the INT_MIN start value below stays the lowest
  typedef conditional_t<is_floating_point_v<T>, float, conditional_t<is_same_v<T, long>, long, int>> S;
  const PoolPos p = pool_position(a, gid);
  S m;
  if (is_floating_point_v<T>) m = S(-INFINITY);
  else if (is_same_v<T, long>) m = S(-0x7fffffffffffffff - 1);
  else m = S(INT_MIN);
  const long h0 = p.oh * a.stride[0] - a.padding[0], w0 = p.ow * a.stride[1] - a.padding[1];
  for (int i = 0; i < a.ksize[0]; ++i) {
    const long h = h0 + long(i) * a.dilation[0];
    if (h < 0 || h >= a.H) continue;
    for (int j = 0; j < a.ksize[1]; ++j) {
      const long w = w0 + long(j) * a.dilation[1];
      if (w < 0 || w >= a.W) continue;
      const S v = S(in[p.in_base + h * a.in_strides[2] + w * a.in_strides[3]]);
      if (v > m || v != v) m = v;
    }
  }
  out[p.out_at] = T(m);
}

template <typename T>
kernel void avg_pool2d(device const T* in [[buffer(0)]],
                       device T* out [[buffer(1)]],
                       constant PoolArgs& a [[buffer(2)]],
                       uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_out) return;
  const PoolPos p = pool_position(a, gid);
  const long h0 = p.oh * a.stride[0] - a.padding[0], w0 = p.ow * a.stride[1] - a.padding[1];
  // the window clipped to the padded input (count with padding) and to the input (sum)
  const long h1 = pool_min(h0 + long(a.ksize[0]), a.H + long(a.padding[0]));
  const long w1 = pool_min(w0 + long(a.ksize[1]), a.W + long(a.padding[1]));
  const long padded = (h1 - h0) * (w1 - w0);
  const long hs = h0 > 0 ? h0 : 0, ws = w0 > 0 ? w0 : 0, he = pool_min(h1, a.H), we = pool_min(w1, a.W);
  if (hs >= he || ws >= we) {  // no input element in the window: torch writes 0
    out[p.out_at] = T(0.0f);
    return;
  }
  float s = 0.0f;
  for (long h = hs; h < he; ++h)
    for (long w = ws; w < we; ++w) s += float(in[p.in_base + h * a.in_strides[2] + w * a.in_strides[3]]);
  const long div = a.divisor != 0 ? long(a.divisor) : a.count_include_pad != 0 ? padded : (he - hs) * (we - ws);
  out[p.out_at] = T(s / float(div));
}

template <typename T>
kernel void adaptive_avg_pool2d(device const T* in [[buffer(0)]],
                                device T* out [[buffer(1)]],
                                constant PoolArgs& a [[buffer(2)]],
                                uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_out) return;
  const PoolPos p = pool_position(a, gid);
  const long hs = p.oh * a.H / a.OH, he = ((p.oh + 1) * a.H + a.OH - 1) / a.OH;
  const long ws = p.ow * a.W / a.OW, we = ((p.ow + 1) * a.W + a.OW - 1) / a.OW;
  float s = 0.0f;
  for (long h = hs; h < he; ++h)
    for (long w = ws; w < we; ++w) s += float(in[p.in_base + h * a.in_strides[2] + w * a.in_strides[3]]);
  out[p.out_at] = T(s / float((he - hs) * (we - ws)));
}

#define BM_INSTANTIATE_MAX_POOL(T, NAME, A) \
  template [[host_name("max_pool2d_" #NAME)]] [[kernel]] decltype(max_pool2d<T>) max_pool2d<T>;
#define BM_INSTANTIATE_AVG_POOL(T, NAME, A)                                                              \
  template [[host_name("avg_pool2d_" #NAME)]] [[kernel]] decltype(avg_pool2d<T>) avg_pool2d<T>;            \
  template [[host_name("adaptive_avg_pool2d_" #NAME)]] [[kernel]] decltype(adaptive_avg_pool2d<T>)         \
      adaptive_avg_pool2d<T>;
BM_DTYPES_NUMERIC(BM_INSTANTIATE_MAX_POOL, _)
BM_DTYPES_FLOAT(BM_INSTANTIATE_AVG_POOL, _)
