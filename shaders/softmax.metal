// softmax and log_softmax along one dim, any strides (SoftmaxArgs: is_log picks log_softmax).
//
// Numerically stable: each row subtracts its maximum before exp, so large logits cannot
// overflow; a row holding NaN gives NaN everywhere (the maximum propagates NaN, as in torch).
// Half types compute in float and round once on store. Two shapes, chosen by the host
// (csrc/metal/ops_softmax.cpp):
//   softmax_group_*  one threadgroup per row: max, sum of exp and the write each stride over the
//                    row, with simd + threadgroup reductions (simd_reduce.h) in between;
//   softmax_thread_* one thread per row, for short rows and for rows that run across memory
//                    (neighbouring threads then read neighbouring elements).
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs.h"
using namespace metal;
#include "simd_reduce.h"  // after the using: its helpers call metal:: functions

// Input and output offsets of the first element of row r (row-major over the other dims).
inline void row_offsets(constant SoftmaxArgs& a, long r, thread long& in_off, thread long& out_off) {
  in_off = a.in_offset;
  out_off = a.out_offset;
  for (int d = a.ndim - 1; d >= 0; --d) {
    long i = r % a.shape[d];
    r /= a.shape[d];
    in_off += i * a.in_strides[d];
    out_off += i * a.out_strides[d];
  }
}

inline float max_nan(float m, float x) { return (x != x || x > m) ? x : m; }

// exp(x - m) / s, or for log_softmax (x - m) - log(s).
inline float softmax_value(float x, float m, float s, bool is_log) {
  return is_log ? (x - m) - log(s) : exp(x - m) / s;
}

template <typename T>
kernel void softmax_group(device const T* in [[buffer(0)]],
                          device T* out [[buffer(1)]],
                          constant SoftmaxArgs& a [[buffer(2)]],
                          uint row [[threadgroup_position_in_grid]],
                          uint lid [[thread_index_in_threadgroup]],
                          uint tsize [[threads_per_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]],
                          uint sg [[simdgroup_index_in_threadgroup]],
                          uint nsg [[simdgroups_per_threadgroup]]) {
  threadgroup float scratch[BM_SIMD_WIDTH];
  long ib, ob;
  row_offsets(a, row, ib, ob);
  const long n = a.len, is = a.in_stride, os = a.out_stride;
  float m = -INFINITY;
  for (long j = lid; j < n; j += tsize) m = max_nan(m, float(in[ib + j * is]));
  m = block_all_reduce<AllMaxNaN>(m, scratch, lane, sg, nsg);
  float s = 0.0f;
  for (long j = lid; j < n; j += tsize) s += exp(float(in[ib + j * is]) - m);
  s = block_all_reduce<AllSum<float>>(s, scratch, lane, sg, nsg);
  const bool is_log = a.is_log != 0;
  for (long j = lid; j < n; j += tsize) out[ob + j * os] = T(softmax_value(float(in[ib + j * is]), m, s, is_log));
}

template <typename T>
kernel void softmax_thread(device const T* in [[buffer(0)]],
                           device T* out [[buffer(1)]],
                           constant SoftmaxArgs& a [[buffer(2)]],
                           uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_rows) return;
  long ib, ob;
  row_offsets(a, gid, ib, ob);
  const long n = a.len, is = a.in_stride, os = a.out_stride;
  float m = -INFINITY;
  for (long j = 0; j < n; ++j) m = max_nan(m, float(in[ib + j * is]));
  float s = 0.0f;
  for (long j = 0; j < n; ++j) s += exp(float(in[ib + j * is]) - m);
  const bool is_log = a.is_log != 0;
  for (long j = 0; j < n; ++j) out[ob + j * os] = T(softmax_value(float(in[ib + j * is]), m, s, is_log));
}

#define BM_INSTANTIATE_SOFTMAX(T, NAME)                                                                   \
  template [[host_name("softmax_group_" #NAME)]] [[kernel]] decltype(softmax_group<T>) softmax_group<T>;    \
  template [[host_name("softmax_thread_" #NAME)]] [[kernel]] decltype(softmax_thread<T>) softmax_thread<T>;
BM_INSTANTIATE_SOFTMAX(half, float16)
BM_INSTANTIATE_SOFTMAX(bfloat, bfloat16)
BM_INSTANTIATE_SOFTMAX(float, float32)
