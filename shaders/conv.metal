// conv2d_<dtype>: a direct convolution as an implicit matrix product (see Conv2dArgs in kargs.h):
// no unfolded copy of the input is ever written. Each threadgroup computes a CV_TILE x CV_TILE
// tile of one group's output (output channels x output pixels of the whole batch); per step of
// CV_BK reduction indices it stages a weight tile and an input-patch tile in threadgroup memory,
// in float (half and bfloat16 accumulate in float32), with zeros for padding and for tile edges
// past the operands, so partial tiles need no special path. Any strides and offsets.
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs.h"
using namespace metal;

constant constexpr int CV_TILE = 32;  // output channels and output columns per threadgroup
constant constexpr int CV_BK = 16;    // reduction indices per step
constant constexpr int CV_T = 8;      // threads per side of the threadgroup
constant constexpr int CV_R = CV_TILE / CV_T;  // rows (and columns) of out per thread
constant constexpr int CV_THREADS = CV_T * CV_T;

template <typename T>
kernel void conv2d_tiled(device const T* input [[buffer(0)]],
                         device const T* weight [[buffer(1)]],
                         device const T* bias [[buffer(2)]],
                         device T* out [[buffer(3)]],
                         constant Conv2dArgs& args [[buffer(4)]],
                         uint3 group [[threadgroup_position_in_grid]],
                         uint3 lid [[thread_position_in_threadgroup]],
                         uint tid [[thread_index_in_threadgroup]]) {
  threadgroup float As[CV_TILE][CV_BK];  // As[i][k]: output channel row0 + i, reduction index k0 + k
  threadgroup float Bs[CV_BK][CV_TILE];  // Bs[k][j]: reduction index k0 + k, output column col0 + j

  const long grp = group.z;
  const long row0 = long(group.y) * CV_TILE, col0 = long(group.x) * CV_TILE;
  const long khw = args.k_h * args.k_w, pix = args.out_h * args.out_w;
  const long oc0 = grp * args.cout_g, ic0 = grp * args.cin_g;

  float acc[CV_R][CV_R];
  for (int r = 0; r < CV_R; ++r)
    for (int c = 0; c < CV_R; ++c) acc[r][c] = 0.0f;

  for (long k0 = 0; k0 < args.k_total; k0 += CV_BK) {
    // Weights: consecutive threads walk the reduction index (contiguous in a usual weight).
    for (uint e = tid; e < uint(CV_TILE * CV_BK); e += CV_THREADS) {
      uint i = e / CV_BK, k = e % CV_BK;
      long o = row0 + i, kk = k0 + k;
      float v = 0.0f;
      if (o < args.cout_g && kk < args.k_total) {
        long c = kk / khw, rem = kk % khw, ky = rem / args.k_w, kx = rem % args.k_w;
        v = float(weight[args.w_offset + (oc0 + o) * args.w_strides[0] + c * args.w_strides[1] +
                         ky * args.w_strides[2] + kx * args.w_strides[3]]);
      }
      As[i][k] = v;
    }
    // Input patches: consecutive threads walk output columns, i.e. neighbouring input pixels.
    for (uint e = tid; e < uint(CV_BK * CV_TILE); e += CV_THREADS) {
      uint k = e / CV_TILE, j = e % CV_TILE;
      long kk = k0 + k, col = col0 + j;
      float v = 0.0f;
      if (kk < args.k_total && col < args.cols) {
        long n = col / pix, p = col % pix, oy = p / args.out_w, ox = p % args.out_w;
        long c = kk / khw, rem = kk % khw, ky = rem / args.k_w, kx = rem % args.k_w;
        long iy = oy * args.stride_h - args.pad_h + ky * args.dil_h;
        long ix = ox * args.stride_w - args.pad_w + kx * args.dil_w;
        if (iy >= 0 && iy < args.in_h && ix >= 0 && ix < args.in_w)
          v = float(input[args.in_offset + n * args.in_strides[0] + (ic0 + c) * args.in_strides[1] +
                          iy * args.in_strides[2] + ix * args.in_strides[3]]);
      }
      Bs[k][j] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int k = 0; k < CV_BK; ++k) {
      float av[CV_R], bv[CV_R];
      for (int r = 0; r < CV_R; ++r) av[r] = As[lid.y + r * CV_T][k];
      for (int c = 0; c < CV_R; ++c) bv[c] = Bs[k][lid.x + c * CV_T];
      for (int r = 0; r < CV_R; ++r)
        for (int c = 0; c < CV_R; ++c) acc[r][c] = fma(av[r], bv[c], acc[r][c]);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);  // the tiles are overwritten next step
  }

  for (int r = 0; r < CV_R; ++r) {
    long o = row0 + lid.y + r * CV_T;
    if (o >= args.cout_g) break;
    float b = args.has_bias ? float(bias[args.bias_offset + (oc0 + o) * args.bias_stride]) : 0.0f;
    for (int c = 0; c < CV_R; ++c) {
      long col = col0 + lid.x + c * CV_T;
      if (col >= args.cols) break;
      long n = col / pix, p = col % pix, oy = p / args.out_w, ox = p % args.out_w;
      out[args.out_offset + n * args.out_strides[0] + (oc0 + o) * args.out_strides[1] + oy * args.out_strides[2] +
          ox * args.out_strides[3]] = T(acc[r][c] + b);
    }
  }
}

#define BM_INSTANTIATE_CONV2D(T, NAME, UNUSED) \
  template [[host_name("conv2d_" #NAME)]] [[kernel]] decltype(conv2d_tiled<T>) conv2d_tiled<T>;
BM_DTYPES_FLOAT(BM_INSTANTIATE_CONV2D, _)
