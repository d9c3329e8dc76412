// The gradients of conv2d (Conv2dBackwardArgs in kargs.h), each an implicit matrix product tiled
// as conv.metal's forward: a threadgroup computes a CB_TILE x CB_TILE tile of one group's result,
// staging per step CB_BK reduction indices of both operands in threadgroup memory, in float (half
// and bfloat16 accumulate in float32), with zeros where an operand has no entry. Every result
// element is one thread's sum over the reduction in a fixed order: no atomics, the same numbers
// run to run. Any strides and offsets.
//
//   conv2d_backward_input_<dtype>   grad_x[n, c, iy, ix] = sum over (o, ky, kx) of
//       weight[o, c, ky, kx] * grad[n, o, oy, ox] where iy = oy * stride_h - pad_h + ky * dil_h
//       (and ix likewise) for a whole output position (oy, ox) in range (a gather: each input
//       pixel reads the output pixels whose windows used it);
//   conv2d_backward_weight_<dtype>  grad_w[o, c, ky, kx] = sum over (n, oy, ox) of
//       grad[n, o, oy, ox] * x[n, c, oy * stride_h - pad_h + ky * dil_h, ...] (zero outside).
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs.h"
using namespace metal;

constant constexpr int CB_TILE = 32;  // result rows and columns per threadgroup
constant constexpr int CB_BK = 16;    // reduction indices per step
constant constexpr int CB_T = 8;      // threads per side of the threadgroup
constant constexpr int CB_R = CB_TILE / CB_T;
constant constexpr int CB_THREADS = CB_T * CB_T;

// grad_output element (n, o, oy, ox) that input pixel (iy, ix) meets through tap (ky, kx), or -1.
inline long conv_bwd_grad_at(constant Conv2dBackwardArgs& a, long n, long o, long iy, long ix, long ky, long kx) {
  const long ty = iy + a.pad_h - ky * a.dil_h, tx = ix + a.pad_w - kx * a.dil_w;
  if (ty < 0 || tx < 0 || ty % a.stride_h != 0 || tx % a.stride_w != 0) return -1;
  const long oy = ty / a.stride_h, ox = tx / a.stride_w;
  if (oy >= a.out_h || ox >= a.out_w) return -1;
  return a.g_offset + n * a.g_strides[0] + o * a.g_strides[1] + oy * a.g_strides[2] + ox * a.g_strides[3];
}

template <typename T>
kernel void conv2d_backward_input(device const T* grad [[buffer(0)]],
                                  device const T* weight [[buffer(1)]],
                                  device T* out [[buffer(2)]],
                                  constant Conv2dBackwardArgs& a [[buffer(3)]],
                                  uint3 group [[threadgroup_position_in_grid]],
                                  uint3 lid [[thread_position_in_threadgroup]],
                                  uint tid [[thread_index_in_threadgroup]]) {
  threadgroup float As[CB_TILE][CB_BK];  // As[i][k]: input channel row0 + i, reduction index k0 + k
  threadgroup float Bs[CB_BK][CB_TILE];  // Bs[k][j]: reduction index k0 + k, input pixel col0 + j

  const long grp = group.z;
  const long row0 = long(group.y) * CB_TILE, col0 = long(group.x) * CB_TILE;
  const long khw = a.k_h * a.k_w, pix = a.in_h * a.in_w;
  const long oc0 = grp * a.cout_g, ic0 = grp * a.cin_g;

  float acc[CB_R][CB_R];
  for (int r = 0; r < CB_R; ++r)
    for (int c = 0; c < CB_R; ++c) acc[r][c] = 0.0f;

  for (long k0 = 0; k0 < a.k_total; k0 += CB_BK) {
    for (uint e = tid; e < uint(CB_TILE * CB_BK); e += CB_THREADS) {
      uint i = e / CB_BK, k = e % CB_BK;
      long ci = row0 + i, kk = k0 + k;
      float v = 0.0f;
      if (ci < a.cin_g && kk < a.k_total) {
        long o = kk / khw, rem = kk % khw, ky = rem / a.k_w, kx = rem % a.k_w;
        v = float(weight[a.a_offset + (oc0 + o) * a.a_strides[0] + ci * a.a_strides[1] + ky * a.a_strides[2] +
                         kx * a.a_strides[3]]);
      }
      As[i][k] = v;
    }
    for (uint e = tid; e < uint(CB_BK * CB_TILE); e += CB_THREADS) {
      uint k = e / CB_TILE, j = e % CB_TILE;
      long kk = k0 + k, col = col0 + j;
      float v = 0.0f;
      if (kk < a.k_total && col < a.cols) {
        long n = col / pix, p = col % pix, iy = p / a.in_w, ix = p % a.in_w;
        long o = kk / khw, rem = kk % khw, ky = rem / a.k_w, kx = rem % a.k_w;
        long at = conv_bwd_grad_at(a, n, oc0 + o, iy, ix, ky, kx);
        if (at >= 0) v = float(grad[at]);
      }
      Bs[k][j] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int k = 0; k < CB_BK; ++k) {
      float av[CB_R], bv[CB_R];
      for (int r = 0; r < CB_R; ++r) av[r] = As[lid.y + r * CB_T][k];
      for (int c = 0; c < CB_R; ++c) bv[c] = Bs[k][lid.x + c * CB_T];
      for (int r = 0; r < CB_R; ++r)
        for (int c = 0; c < CB_R; ++c) acc[r][c] = fma(av[r], bv[c], acc[r][c]);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);  // the tiles are overwritten next step
  }

  for (int r = 0; r < CB_R; ++r) {
    long ci = row0 + lid.y + r * CB_T;
    if (ci >= a.cin_g) break;
    for (int c = 0; c < CB_R; ++c) {
      long col = col0 + lid.x + c * CB_T;
      if (col >= a.cols) break;
      long n = col / pix, p = col % pix, iy = p / a.in_w, ix = p % a.in_w;
      out[a.r_offset + n * a.r_strides[0] + (ic0 + ci) * a.r_strides[1] + iy * a.r_strides[2] +
          ix * a.r_strides[3]] = T(acc[r][c]);
    }
  }
}

template <typename T>
kernel void conv2d_backward_weight(device const T* grad [[buffer(0)]],
                                   device const T* input [[buffer(1)]],
                                   device T* out [[buffer(2)]],
                                   constant Conv2dBackwardArgs& a [[buffer(3)]],
                                   uint3 group [[threadgroup_position_in_grid]],
                                   uint3 lid [[thread_position_in_threadgroup]],
                                   uint tid [[thread_index_in_threadgroup]]) {
  threadgroup float As[CB_TILE][CB_BK];  // As[i][k]: output channel row0 + i, pixel (n, oy, ox) k0 + k
  threadgroup float Bs[CB_BK][CB_TILE];  // Bs[k][j]: pixel k0 + k, weight column (c, ky, kx) col0 + j

  const long grp = group.z;
  const long row0 = long(group.y) * CB_TILE, col0 = long(group.x) * CB_TILE;
  const long khw = a.k_h * a.k_w, pix = a.out_h * a.out_w;
  const long oc0 = grp * a.cout_g, ic0 = grp * a.cin_g;

  float acc[CB_R][CB_R];
  for (int r = 0; r < CB_R; ++r)
    for (int c = 0; c < CB_R; ++c) acc[r][c] = 0.0f;

  for (long k0 = 0; k0 < a.k_total; k0 += CB_BK) {
    // grad_output: consecutive threads walk output pixels (contiguous in a usual layout)
    for (uint e = tid; e < uint(CB_TILE * CB_BK); e += CB_THREADS) {
      uint i = e / CB_BK, k = e % CB_BK;
      long o = row0 + i, kk = k0 + k;
      float v = 0.0f;
      if (o < a.cout_g && kk < a.k_total) {
        long n = kk / pix, p = kk % pix, oy = p / a.out_w, ox = p % a.out_w;
        v = float(grad[a.g_offset + n * a.g_strides[0] + (oc0 + o) * a.g_strides[1] + oy * a.g_strides[2] +
                       ox * a.g_strides[3]]);
      }
      As[i][k] = v;
    }
    for (uint e = tid; e < uint(CB_BK * CB_TILE); e += CB_THREADS) {
      uint k = e / CB_TILE, j = e % CB_TILE;
      long kk = k0 + k, col = col0 + j;
      float v = 0.0f;
      if (kk < a.k_total && col < a.cols) {
        long n = kk / pix, p = kk % pix, oy = p / a.out_w, ox = p % a.out_w;
        long c = col / khw, rem = col % khw, ky = rem / a.k_w, kx = rem % a.k_w;
        long iy = oy * a.stride_h - a.pad_h + ky * a.dil_h;
        long ix = ox * a.stride_w - a.pad_w + kx * a.dil_w;
        if (iy >= 0 && iy < a.in_h && ix >= 0 && ix < a.in_w)
          v = float(input[a.a_offset + n * a.a_strides[0] + (ic0 + c) * a.a_strides[1] + iy * a.a_strides[2] +
                          ix * a.a_strides[3]]);
      }
      Bs[k][j] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int k = 0; k < CB_BK; ++k) {
      float av[CB_R], bv[CB_R];
      for (int r = 0; r < CB_R; ++r) av[r] = As[lid.y + r * CB_T][k];
      for (int c = 0; c < CB_R; ++c) bv[c] = Bs[k][lid.x + c * CB_T];
      for (int r = 0; r < CB_R; ++r)
        for (int c = 0; c < CB_R; ++c) acc[r][c] = fma(av[r], bv[c], acc[r][c]);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }

  for (int r = 0; r < CB_R; ++r) {
    long o = row0 + lid.y + r * CB_T;
    if (o >= a.cout_g) break;
    for (int c = 0; c < CB_R; ++c) {
      long col = col0 + lid.x + c * CB_T;
      if (col >= a.cols) break;
      long ci = col / khw, rem = col % khw, ky = rem / a.k_w, kx = rem % a.k_w;
      out[a.r_offset + (oc0 + o) * a.r_strides[0] + ci * a.r_strides[1] + ky * a.r_strides[2] +
          kx * a.r_strides[3]] = T(acc[r][c]);
    }
  }
}

#define BM_INSTANTIATE_CONV2D_BACKWARD(T, NAME, UNUSED)                                                    \
  template [[host_name("conv2d_backward_input_" #NAME)]] [[kernel]] decltype(conv2d_backward_input<T>)      \
      conv2d_backward_input<T>;                                                                             \
  template [[host_name("conv2d_backward_weight_" #NAME)]] [[kernel]] decltype(conv2d_backward_weight<T>)    \
      conv2d_backward_weight<T>;
BM_DTYPES_FLOAT(BM_INSTANTIATE_CONV2D_BACKWARD, _)
