// Normalisation kernels; the host side is csrc/metal/ops_norm.cpp, the CPU twins csrc/cpu/norm.cpp.
//
//   layer_norm_group_*   one threadgroup per row: sum, sum of squared deviations from the mean
//                        (two passes, float accumulation, simd + threadgroup reductions), write;
//   layer_norm_thread_*  one thread per row, for short rows.
//   batch_norm_*         out = x * scale + shift, one thread per element; scale/shift are float
//                        per-channel values the host computed, viewed with zero strides.
// Rows and their elements may have any strides (LayerNormArgs): a transposed view is normalised
// along the dims it shows. Half types compute in float and round once on store.
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs.h"
#include "elementwise.h"
using namespace metal;
#include "simd_reduce.h"  // after the using: its helpers call metal:: functions

// Input and output offsets of row r's first element.
inline void ln_row_offsets(constant LayerNormArgs& a, long r, thread long& io, thread long& oo) {
  io = a.in_offset;
  oo = a.out_offset;
  for (int d = a.row_ndim - 1; d >= 0; --d) {
    long i = r % a.row_shape[d];
    r /= a.row_shape[d];
    io += i * a.row_in_strides[d];
    oo += i * a.row_out_strides[d];
  }
}

// Offsets of element j within a row (row-major over the merged trailing dims).
inline void ln_col_offsets(constant LayerNormArgs& a, long j, thread long& io, thread long& oo) {
  io = 0;
  oo = 0;
  for (int d = a.col_ndim - 1; d >= 0; --d) {
    long i = j % a.col_shape[d];
    j /= a.col_shape[d];
    io += i * a.col_in_strides[d];
    oo += i * a.col_out_strides[d];
  }
}

inline long ln_col_in(constant LayerNormArgs& a, long j) {
  long io, oo;
  ln_col_offsets(a, j, io, oo);
  return io;
}

// (x - mean) * rstd [* w[j]] [+ b[j]]
template <typename T>
inline float ln_value(float x, float mean, float rstd, device const T* w, device const T* b, long j,
                      constant LayerNormArgs& a) {
  float y = (x - mean) * rstd;
  if (a.has_weight) y *= float(w[a.w_offset + j]);
  if (a.has_bias) y += float(b[a.b_offset + j]);
  return y;
}

template <typename T>
kernel void layer_norm_group(device const T* x [[buffer(0)]],
                             device const T* w [[buffer(1)]],
                             device const T* b [[buffer(2)]],
                             device T* out [[buffer(3)]],
                             constant LayerNormArgs& a [[buffer(4)]],
                             uint row [[threadgroup_position_in_grid]],
                             uint lid [[thread_index_in_threadgroup]],
                             uint tsize [[threads_per_threadgroup]],
                             uint lane [[thread_index_in_simdgroup]],
                             uint sg [[simdgroup_index_in_threadgroup]],
                             uint nsg [[simdgroups_per_threadgroup]]) {
  threadgroup float scratch[BM_SIMD_WIDTH];
  long ib, ob;
  ln_row_offsets(a, row, ib, ob);
  const long n = a.n_cols;
  float s = 0.0f;
  for (long j = lid; j < n; j += tsize) s += float(x[ib + ln_col_in(a, j)]);
  const float mean = block_all_reduce<AllSum<float>>(s, scratch, lane, sg, nsg) / float(n);
  float q = 0.0f;
  for (long j = lid; j < n; j += tsize) {
    float d = float(x[ib + ln_col_in(a, j)]) - mean;
    q += d * d;
  }
  const float var = block_all_reduce<AllSum<float>>(q, scratch, lane, sg, nsg) / float(n);
  const float rstd = 1.0f / precise::sqrt(var + a.eps);
  for (long j = lid; j < n; j += tsize) {
    long io, oo;
    ln_col_offsets(a, j, io, oo);
    out[ob + oo] = T(ln_value(float(x[ib + io]), mean, rstd, w, b, j, a));
  }
}

template <typename T>
kernel void layer_norm_thread(device const T* x [[buffer(0)]],
                              device const T* w [[buffer(1)]],
                              device const T* b [[buffer(2)]],
                              device T* out [[buffer(3)]],
                              constant LayerNormArgs& a [[buffer(4)]],
                              uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_rows) return;
  long ib, ob;
  ln_row_offsets(a, gid, ib, ob);
  const long n = a.n_cols;
  float s = 0.0f;
  for (long j = 0; j < n; ++j) s += float(x[ib + ln_col_in(a, j)]);
  const float mean = s / float(n);
  float q = 0.0f;
  for (long j = 0; j < n; ++j) {
    float d = float(x[ib + ln_col_in(a, j)]) - mean;
    q += d * d;
  }
  const float rstd = 1.0f / precise::sqrt(q / float(n) + a.eps);
  for (long j = 0; j < n; ++j) {
    long io, oo;
    ln_col_offsets(a, j, io, oo);
    out[ob + oo] = T(ln_value(float(x[ib + io]), mean, rstd, w, b, j, a));
  }
}

// Operands in ElementwiseArgs order: 0 out, 1 x, 2 scale, 3 shift.
template <typename T>
kernel void batch_norm(device const T* x [[buffer(0)]],
                       device const float* scale [[buffer(1)]],
                       device const float* shift [[buffer(2)]],
                       device T* out [[buffer(3)]],
                       constant ElementwiseArgs& args [[buffer(4)]],
                       uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  bm_offsets o = bm_strided_offsets(args, gid, 4);
  out[o.v[0]] = T(float(x[o.v[1]]) * scale[o.v[2]] + shift[o.v[3]]);
}

#define BM_INSTANTIATE_NORM(T, NAME)                                                                        \
  template [[host_name("layer_norm_group_" #NAME)]] [[kernel]] decltype(layer_norm_group<T>) layer_norm_group<T>; \
  template [[host_name("layer_norm_thread_" #NAME)]] [[kernel]] decltype(layer_norm_thread<T>)                \
      layer_norm_thread<T>;                                                                                   \
  template [[host_name("batch_norm_" #NAME)]] [[kernel]] decltype(batch_norm<T>) batch_norm<T>;
BM_INSTANTIATE_NORM(half, float16)
BM_INSTANTIATE_NORM(bfloat, bfloat16)
BM_INSTANTIATE_NORM(float, float32)
