// Backward kernels of the normalisations; the host side is csrc/metal/ops_norm_backward.cpp, the
// CPU twins csrc/cpu/norm_backward.cpp.
//
//   layer_norm_backward_group_*   one threadgroup per row: mean and variance as layer_norm_group
//                                 computes them, then m1 = mean(gw), m2 = mean(gw * xhat) (gw =
//                                 grad [* w], xhat = (x - mean) * rstd) in one float2 reduction,
//                                 then grad_input = (gw - (xhat * m2 + m1)) * rstd;
//   layer_norm_backward_thread_*  one thread per row, for short rows.
//   batch_norm_backward_*         one thread per element, per-channel coefficients from the host.
// Half types compute in float and round once on store.
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs.h"
#include "elementwise.h"
using namespace metal;
#include "simd_reduce.h"  // after the using: its helpers call metal:: functions

// Offsets of row r's first element in grad, input and out.
inline void lnb_row_offsets(constant LayerNormBackwardArgs& a, long r, thread long& go, thread long& xo,
                            thread long& oo) {
  go = a.offset[0];
  xo = a.offset[1];
  oo = a.offset[2];
  for (int d = a.row_ndim - 1; d >= 0; --d) {
    long i = r % a.row_shape[d];
    r /= a.row_shape[d];
    go += i * a.row_strides[0][d];
    xo += i * a.row_strides[1][d];
    oo += i * a.row_strides[2][d];
  }
}

// Offset of element j within a row of operand k (row-major over the merged trailing dims).
inline long lnb_col(constant LayerNormBackwardArgs& a, long j, int k) {
  long off = 0;
  for (int d = a.col_ndim - 1; d >= 0; --d) {
    long i = j % a.col_shape[d];
    j /= a.col_shape[d];
    off += i * a.col_strides[k][d];
  }
  return off;
}

template <typename T>
inline float lnb_gw(device const T* g, device const T* w, long gb, long j, constant LayerNormBackwardArgs& a) {
  float v = float(g[gb + lnb_col(a, j, 0)]);
  if (a.has_weight) v = v * float(w[a.w_offset + j]);
  return v;
}

template <typename T>
kernel void layer_norm_backward_group(device const T* g [[buffer(0)]],
                                      device const T* x [[buffer(1)]],
                                      device const T* w [[buffer(2)]],
                                      device T* out [[buffer(3)]],
                                      constant LayerNormBackwardArgs& a [[buffer(4)]],
                                      uint row [[threadgroup_position_in_grid]],
                                      uint lid [[thread_index_in_threadgroup]],
                                      uint tsize [[threads_per_threadgroup]],
                                      uint lane [[thread_index_in_simdgroup]],
                                      uint sg [[simdgroup_index_in_threadgroup]],
                                      uint nsg [[simdgroups_per_threadgroup]]) {
  threadgroup float scratch[BM_SIMD_WIDTH];
  threadgroup float2 scratch2[BM_SIMD_WIDTH];
  long gb, xb, ob;
  lnb_row_offsets(a, row, gb, xb, ob);
  const long n = a.n_cols;
  float s = 0.0f;
  for (long j = lid; j < n; j += tsize) s += float(x[xb + lnb_col(a, j, 1)]);
  const float mean = block_all_reduce<AllSum<float>>(s, scratch, lane, sg, nsg) / float(n);
  float q = 0.0f;
  for (long j = lid; j < n; j += tsize) {
    float d = float(x[xb + lnb_col(a, j, 1)]) - mean;
    q += d * d;
  }
  const float var = block_all_reduce<AllSum<float>>(q, scratch, lane, sg, nsg) / float(n);
  const float rstd = 1.0f / precise::sqrt(var + a.eps);
  float2 m = float2(0.0f);
  for (long j = lid; j < n; j += tsize) {
    const float gw = lnb_gw(g, w, gb, j, a);
    const float xh = (float(x[xb + lnb_col(a, j, 1)]) - mean) * rstd;
    m += float2(gw, gw * xh);
  }
  m = block_all_reduce<AllSum<float2>>(m, scratch2, lane, sg, nsg);
  const float inv_n = 1.0f / float(n);
  const float m1 = m.x * inv_n, m2 = m.y * inv_n;
  for (long j = lid; j < n; j += tsize) {
    const float gw = lnb_gw(g, w, gb, j, a);
    const float xh = (float(x[xb + lnb_col(a, j, 1)]) - mean) * rstd;
    out[ob + lnb_col(a, j, 2)] = T((gw - (xh * m2 + m1)) * rstd);
  }
}

template <typename T>
kernel void layer_norm_backward_thread(device const T* g [[buffer(0)]],
                                       device const T* x [[buffer(1)]],
                                       device const T* w [[buffer(2)]],
                                       device T* out [[buffer(3)]],
                                       constant LayerNormBackwardArgs& a [[buffer(4)]],
                                       uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_rows) return;
  long gb, xb, ob;
  lnb_row_offsets(a, gid, gb, xb, ob);
  const long n = a.n_cols;
  float s = 0.0f;
  for (long j = 0; j < n; ++j) s += float(x[xb + lnb_col(a, j, 1)]);
  const float mean = s / float(n);
  float q = 0.0f;
  for (long j = 0; j < n; ++j) {
    float d = float(x[xb + lnb_col(a, j, 1)]) - mean;
    q += d * d;
  }
  const float rstd = 1.0f / precise::sqrt(q / float(n) + a.eps);
  float m1 = 0.0f, m2 = 0.0f;
  for (long j = 0; j < n; ++j) {
    const float gw = lnb_gw(g, w, gb, j, a);
    const float xh = (float(x[xb + lnb_col(a, j, 1)]) - mean) * rstd;
    m1 += gw;
    m2 += gw * xh;
  }
  const float inv_n = 1.0f / float(n);
  m1 = m1 * inv_n;
  m2 = m2 * inv_n;
  for (long j = 0; j < n; ++j) {
    const float gw = lnb_gw(g, w, gb, j, a);
    const float xh = (float(x[xb + lnb_col(a, j, 1)]) - mean) * rstd;
    out[ob + lnb_col(a, j, 2)] = T((gw - (xh * m2 + m1)) * rstd);
  }
}

// Operands in ElementwiseArgs order: 0 out, 1 grad, 2 x, 3 coef (a, k, mean, c per channel).
template <typename T>
kernel void batch_norm_backward(device const T* g [[buffer(0)]],
                                device const T* x [[buffer(1)]],
                                device const float* coef [[buffer(2)]],
                                device T* out [[buffer(3)]],
                                constant ElementwiseArgs& args [[buffer(4)]],
                                uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  bm_offsets o = bm_strided_offsets(args, gid, 4);
  const long c = o.v[3];
  float r = float(g[o.v[1]]) * coef[c];
  if (args.flags != 0) r = (r + (float(x[o.v[2]]) - coef[c + 2]) * coef[c + 1]) + coef[c + 3];
  out[o.v[0]] = T(r);
}

#define BM_INSTANTIATE_NORM_BACKWARD(T, NAME, A)                                                           \
  template [[host_name("layer_norm_backward_group_" #NAME)]] [[kernel]]                                   \
      decltype(layer_norm_backward_group<T>) layer_norm_backward_group<T>;                                 \
  template [[host_name("layer_norm_backward_thread_" #NAME)]] [[kernel]]                                  \
      decltype(layer_norm_backward_thread<T>) layer_norm_backward_thread<T>;                               \
  template [[host_name("batch_norm_backward_" #NAME)]] [[kernel]] decltype(batch_norm_backward<T>)        \
      batch_norm_backward<T>;
BM_DTYPES_FLOAT(BM_INSTANTIATE_NORM_BACKWARD, _)
