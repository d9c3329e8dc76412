// softmax_backward and log_softmax_backward along one dim, any strides (SoftmaxBackwardArgs; the
// host side is csrc/metal/ops_softmax_backward.cpp, the CPU twin csrc/cpu/softmax_backward.cpp):
//   softmax      s = sum(g * y), out = y * (g - s)
//   log_softmax  s = sum(g),     out = g - exp(y) * s   (exp: bm_exp_f32, the CPU's exp_f32)
// Half types compute in float and round once on store. Two shapes, as softmax.metal:
//   softmax_backward_group_*   one threadgroup per row, simd + threadgroup reduction of s;
//   softmax_backward_thread_*  one thread per row, for short rows and rows that run across memory.
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs.h"
#include "bm_exp_f32.h"
using namespace metal;
#include "simd_reduce.h"  // after the using: its helpers call metal:: functions

// Offsets of row r's first element in grad, y and out (row-major over the other dims).
inline void sbw_row_offsets(constant SoftmaxBackwardArgs& a, long r, thread long& go, thread long& yo,
                            thread long& oo) {
  go = a.offset[0];
  yo = a.offset[1];
  oo = a.offset[2];
  for (int d = a.ndim - 1; d >= 0; --d) {
    long i = r % a.shape[d];
    r /= a.shape[d];
    go += i * a.strides[0][d];
    yo += i * a.strides[1][d];
    oo += i * a.strides[2][d];
  }
}

inline float sbw_term(float g, float y, bool is_log) { return is_log ? g : g * y; }
inline float sbw_value(float g, float y, float s, bool is_log) {
  return is_log ? g - bm_exp_f32(y) * s : y * (g - s);
}

template <typename T>
kernel void softmax_backward_group(device const T* g [[buffer(0)]],
                                   device const T* y [[buffer(1)]],
                                   device T* out [[buffer(2)]],
                                   constant SoftmaxBackwardArgs& a [[buffer(3)]],
                                   uint row [[threadgroup_position_in_grid]],
                                   uint lid [[thread_index_in_threadgroup]],
                                   uint tsize [[threads_per_threadgroup]],
                                   uint lane [[thread_index_in_simdgroup]],
                                   uint sg [[simdgroup_index_in_threadgroup]],
                                   uint nsg [[simdgroups_per_threadgroup]]) {
  threadgroup float scratch[BM_SIMD_WIDTH];
  long gb, yb, ob;
  sbw_row_offsets(a, row, gb, yb, ob);
  const long n = a.len, gs = a.stride[0], ys = a.stride[1], os = a.stride[2];
  const bool is_log = a.is_log != 0;
  float s = 0.0f;
  for (long j = lid; j < n; j += tsize) s += sbw_term(float(g[gb + j * gs]), float(y[yb + j * ys]), is_log);
  s = block_all_reduce<AllSum<float>>(s, scratch, lane, sg, nsg);
  for (long j = lid; j < n; j += tsize)
    out[ob + j * os] = T(sbw_value(float(g[gb + j * gs]), float(y[yb + j * ys]), s, is_log));
}

template <typename T>
kernel void softmax_backward_thread(device const T* g [[buffer(0)]],
                                    device const T* y [[buffer(1)]],
                                    device T* out [[buffer(2)]],
                                    constant SoftmaxBackwardArgs& a [[buffer(3)]],
                                    uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_rows) return;
  long gb, yb, ob;
  sbw_row_offsets(a, gid, gb, yb, ob);
  const long n = a.len, gs = a.stride[0], ys = a.stride[1], os = a.stride[2];
  const bool is_log = a.is_log != 0;
  float s = 0.0f;
  for (long j = 0; j < n; ++j) s += sbw_term(float(g[gb + j * gs]), float(y[yb + j * ys]), is_log);
  for (long j = 0; j < n; ++j) out[ob + j * os] = T(sbw_value(float(g[gb + j * gs]), float(y[yb + j * ys]), s, is_log));
}

#define BM_INSTANTIATE_SOFTMAX_BACKWARD(T, NAME, A)                                                      \
  template [[host_name("softmax_backward_group_" #NAME)]] [[kernel]] decltype(softmax_backward_group<T>) \
      softmax_backward_group<T>;                                                                        \
  template [[host_name("softmax_backward_thread_" #NAME)]] [[kernel]] decltype(softmax_backward_thread<T>) \
      softmax_backward_thread<T>;
BM_DTYPES_FLOAT(BM_INSTANTIATE_SOFTMAX_BACKWARD, _)
