// max_pool2d_with_indices and the pooling gradients (csrc/cpu/pool_backward.cpp computes the same
// numbers in the same order).
//
//   max_pool2d_with_indices_<dtype>  (PoolArgs, one thread per output element) torch's index
//       h * W + w of the window's maximum: the first maximum in row-major window order, a NaN
//       replacing it (the last NaN wins), the first tap's index when nothing beats -inf;
//   max_pool2d_backward_<dtype>, avg_pool2d_backward_<dtype>, adaptive_avg_pool2d_backward_<dtype>
//       (PoolBackwardArgs, one thread per input-gradient element): a gather over the windows
//       covering the element, rows then columns ascending, summing in float the gradients of the
//       max windows whose index names it, or each average window's gradient over its divisor.
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs.h"
using namespace metal;

inline long pb_min(long x, long y) { return x < y ? x : y; }
inline long pb_max(long x, long y) { return x > y ? x : y; }
inline long pb_floor_div(long a, long b) { return a / b - ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0); }

template <typename T>
kernel void max_pool2d_with_indices(device const T* in [[buffer(0)]],
                                    device long* out [[buffer(1)]],
                                    constant PoolArgs& a [[buffer(2)]],
                                    uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_out) return;
  // int8/uint8/int16 compare as int, so the INT_MIN start value below stays the lowest
  typedef conditional_t<is_floating_point_v<T>, float, conditional_t<is_same_v<T, long>, long, int>> S;
  const long ow = long(gid) % a.OW, r = long(gid) / a.OW, oh = r % a.OH, plane = r / a.OH + a.plane_base;
  const long n = plane / a.C, c = plane % a.C;
  const long base = a.in_offset + n * a.in_strides[0] + c * a.in_strides[1];
  long h0 = oh * a.stride[0] - a.padding[0], w0 = ow * a.stride[1] - a.padding[1];
  const long h1 = pb_min(h0 + long(a.ksize[0] - 1) * a.dilation[0] + 1, a.H);
  const long w1 = pb_min(w0 + long(a.ksize[1] - 1) * a.dilation[1] + 1, a.W);
  while (h0 < 0) h0 += a.dilation[0];
  while (w0 < 0) w0 += a.dilation[1];
  S m;
  if (is_floating_point_v<T>) m = S(-INFINITY);
  else if (is_same_v<T, long>) m = S(-0x7fffffffffffffff - 1);
  else m = S(INT_MIN);
  long best = h0 * a.W + w0;
  for (long h = h0; h < h1; h += a.dilation[0]) {
    for (long w = w0; w < w1; w += a.dilation[1]) {
      const S v = S(in[base + h * a.in_strides[2] + w * a.in_strides[3]]);
      if (v > m || v != v) {
        m = v;
        best = h * a.W + w;
      }
    }
  }
  out[a.out_offset + n * a.out_strides[0] + c * a.out_strides[1] + oh * a.out_strides[2] + ow * a.out_strides[3]] =
      best;
}

// The input-gradient element of thread gid: its plane's (n, c), (h, w) and output position.
struct PoolBwdPos {
  long n, c, h, w, out_at;
};

inline PoolBwdPos pool_bwd_position(constant PoolBackwardArgs& a, uint gid) {
  PoolBwdPos p;
  p.w = long(gid) % a.W;
  const long r = long(gid) / a.W;
  p.h = r % a.H;
  const long plane = r / a.H + a.plane_base;
  p.n = plane / a.C;
  p.c = plane % a.C;
  p.out_at = a.out_offset + p.n * a.out_strides[0] + p.c * a.out_strides[1] + p.h * a.out_strides[2] +
             p.w * a.out_strides[3];
  return p;
}

// Windows o in [0, out) with o * stride - pad <= i <= o * stride - pad + span: [lo, hi).
inline long pb_cover_lo(long i, long stride, long pad, long span) {
  return pb_max(0, pb_floor_div(i + pad - span + stride - 1, stride));
}
inline long pb_cover_hi(long i, long out, long stride, long pad) {
  return pb_min(out, pb_floor_div(i + pad, stride) + 1);
}

template <typename T>
kernel void max_pool2d_backward(device const T* grad [[buffer(0)]],
                                device const long* idx [[buffer(1)]],
                                device T* out [[buffer(2)]],
                                constant PoolBackwardArgs& a [[buffer(3)]],
                                uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n) return;
  const PoolBwdPos p = pool_bwd_position(a, gid);
  const long gbase = a.g_offset + p.n * a.g_strides[0] + p.c * a.g_strides[1];
  const long ibase = a.idx_offset + p.n * a.idx_strides[0] + p.c * a.idx_strides[1];
  const long span_h = long(a.ksize[0] - 1) * a.dilation[0], span_w = long(a.ksize[1] - 1) * a.dilation[1];
  const long hlo = pb_cover_lo(p.h, a.stride[0], a.padding[0], span_h);
  const long hhi = pb_cover_hi(p.h, a.OH, a.stride[0], a.padding[0]);
  const long wlo = pb_cover_lo(p.w, a.stride[1], a.padding[1], span_w);
  const long whi = pb_cover_hi(p.w, a.OW, a.stride[1], a.padding[1]);
  const long self = p.h * a.W + p.w;
  float s = 0.0f;
  for (long oh = hlo; oh < hhi; ++oh)
    for (long ow = wlo; ow < whi; ++ow)
      if (idx[ibase + oh * a.idx_strides[2] + ow * a.idx_strides[3]] == self)
        s += float(grad[gbase + oh * a.g_strides[2] + ow * a.g_strides[3]]);
  out[p.out_at] = T(s);
}

// avg_pool2d's divisor factor along one dim for window o: the window clipped to the padded input
// (count_include_pad) or to the input, as the forward.
inline long pb_avg_factor(long o, long k, long stride, long pad, long n, int include_pad) {
  const long start = o * stride - pad, end = pb_min(start + k, n + pad);
  return include_pad != 0 ? end - start : pb_max(0, pb_min(end, n) - pb_max(start, 0));
}

template <typename T>
kernel void avg_pool2d_backward(device const T* grad [[buffer(0)]],
                                device T* out [[buffer(1)]],
                                constant PoolBackwardArgs& a [[buffer(2)]],
                                uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n) return;
  const PoolBwdPos p = pool_bwd_position(a, gid);
  const long gbase = a.g_offset + p.n * a.g_strides[0] + p.c * a.g_strides[1];
  const long hlo = pb_cover_lo(p.h, a.stride[0], a.padding[0], a.ksize[0] - 1);
  const long hhi = pb_cover_hi(p.h, a.OH, a.stride[0], a.padding[0]);
  const long wlo = pb_cover_lo(p.w, a.stride[1], a.padding[1], a.ksize[1] - 1);
  const long whi = pb_cover_hi(p.w, a.OW, a.stride[1], a.padding[1]);
  float s = 0.0f;
  for (long oh = hlo; oh < hhi; ++oh) {
    const long fh = pb_avg_factor(oh, a.ksize[0], a.stride[0], a.padding[0], a.H, a.count_include_pad);
    for (long ow = wlo; ow < whi; ++ow) {
      const long div = a.divisor != 0
                           ? long(a.divisor)
                           : fh * pb_avg_factor(ow, a.ksize[1], a.stride[1], a.padding[1], a.W, a.count_include_pad);
      s += float(grad[gbase + oh * a.g_strides[2] + ow * a.g_strides[3]]) / float(div);
    }
  }
  out[p.out_at] = T(s);
}

template <typename T>
kernel void adaptive_avg_pool2d_backward(device const T* grad [[buffer(0)]],
                                         device T* out [[buffer(1)]],
                                         constant PoolBackwardArgs& a [[buffer(2)]],
                                         uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n) return;
  const PoolBwdPos p = pool_bwd_position(a, gid);
  const long gbase = a.g_offset + p.n * a.g_strides[0] + p.c * a.g_strides[1];
  // windows [floor(o * H / OH), ceil((o + 1) * H / OH)) covering h: o in [floor(h * OH / H), ceil((h + 1) * OH / H))
  const long hlo = p.h * a.OH / a.H, hhi = pb_min(a.OH, ((p.h + 1) * a.OH + a.H - 1) / a.H);
  const long wlo = p.w * a.OW / a.W, whi = pb_min(a.OW, ((p.w + 1) * a.OW + a.W - 1) / a.W);
  float s = 0.0f;
  for (long oh = hlo; oh < hhi; ++oh) {
    const long fh = ((oh + 1) * a.H + a.OH - 1) / a.OH - oh * a.H / a.OH;
    for (long ow = wlo; ow < whi; ++ow) {
      const long fw = ((ow + 1) * a.W + a.OW - 1) / a.OW - ow * a.W / a.OW;
      s += float(grad[gbase + oh * a.g_strides[2] + ow * a.g_strides[3]]) / float(fh * fw);
    }
  }
  out[p.out_at] = T(s);
}

#define BM_INSTANTIATE_MAX_POOL_INDICES(T, NAME, A)                                                        \
  template [[host_name("max_pool2d_with_indices_" #NAME)]] [[kernel]] decltype(max_pool2d_with_indices<T>)  \
      max_pool2d_with_indices<T>;
#define BM_INSTANTIATE_POOL_BACKWARD(T, NAME, A)                                                           \
  template [[host_name("max_pool2d_backward_" #NAME)]] [[kernel]] decltype(max_pool2d_backward<T>)          \
      max_pool2d_backward<T>;                                                                               \
  template [[host_name("avg_pool2d_backward_" #NAME)]] [[kernel]] decltype(avg_pool2d_backward<T>)          \
      avg_pool2d_backward<T>;                                                                               \
  template [[host_name("adaptive_avg_pool2d_backward_" #NAME)]] [[kernel]]                                  \
      decltype(adaptive_avg_pool2d_backward<T>) adaptive_avg_pool2d_backward<T>;
BM_DTYPES_NUMERIC(BM_INSTANTIATE_MAX_POOL_INDICES, _)
BM_DTYPES_FLOAT(BM_INSTANTIATE_POOL_BACKWARD, _)
