// Kernels shaped like the Metal backend's: a tiled matmul with 2-d threadgroup tiles, and a row
// softmax built on functor-templated block reductions (simulator tests).
#include <metal_stdlib>
using namespace metal;

constant constexpr uint TILE = 16;

struct MatmulDims {
  uint M, K, N;
};

template <typename T>
kernel void matmul_tiled(device const T* A [[buffer(0)]],
                         device const T* B [[buffer(1)]],
                         device T* C [[buffer(2)]],
                         constant MatmulDims& d [[buffer(3)]],
                         uint2 gid [[thread_position_in_grid]],
                         uint2 lid [[thread_position_in_threadgroup]]) {
  threadgroup float As[TILE][TILE + 1];
  threadgroup float Bs[TILE][TILE + 1];
  float acc = 0.0;
  const uint row = gid.y, col = gid.x;
  for (uint t = 0; t < d.K; t += TILE) {
    As[lid.y][lid.x] = (row < d.M && t + lid.x < d.K) ? float(A[row * d.K + t + lid.x]) : 0.0;
    Bs[lid.y][lid.x] = (col < d.N && t + lid.y < d.K) ? float(B[(t + lid.y) * d.N + col]) : 0.0;
    threadgroup_barrier(mem_flags::mem_threadgroup);
#pragma unroll
    for (uint k = 0; k < TILE; ++k) acc = fma(As[lid.y][k], Bs[k][lid.x], acc);
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (row < d.M && col < d.N) C[row * d.N + col] = T(acc);
}

#define BM_MATMUL(T) \
  template [[host_name("matmul_tiled_" #T)]] [[kernel]] decltype(matmul_tiled<T>) matmul_tiled<T>;
BM_MATMUL(float)
BM_MATMUL(half)

struct MaxOp {
  static float simd(float v) { return simd_max(v); }
  static float combine(float a, float b) { return max(a, b); }
  static float identity() { return -INFINITY; }
};
struct SumOp {
  static float simd(float v) { return simd_sum(v); }
  static float combine(float a, float b) { return a + b; }
  static float identity() { return 0.0; }
};

// Every thread gets the reduction of `v` over the threadgroup.
template <typename Op>
inline float block_reduce(float v, threadgroup float* scratch, uint lane, uint sg, uint nsg) {
  v = Op::simd(v);
  if (lane == 0) scratch[sg] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  v = lane < nsg ? scratch[lane] : Op::identity();
  v = Op::simd(v);
  threadgroup_barrier(mem_flags::mem_threadgroup);  // scratch is reused by the next reduction
  return v;
}

template <typename T>
kernel void softmax_rows(device const T* x [[buffer(0)]],
                         device T* y [[buffer(1)]],
                         constant uint& cols [[buffer(2)]],
                         uint row [[threadgroup_position_in_grid]],
                         uint lid [[thread_index_in_threadgroup]],
                         uint size [[threads_per_threadgroup]],
                         uint lane [[thread_index_in_simdgroup]],
                         uint sg [[simdgroup_index_in_threadgroup]],
                         uint nsg [[simdgroups_per_threadgroup]]) {
  threadgroup float scratch[32];
  device const T* xr = x + row * cols;
  float m = -numeric_limits<float>::infinity();
  for (uint i = lid; i < cols; i += size) m = MaxOp::combine(m, float(xr[i]));
  m = block_reduce<MaxOp>(m, scratch, lane, sg, nsg);
  float s = SumOp::identity();
  for (uint i = lid; i < cols; i += size) s += fast::exp(float(xr[i]) - m);
  s = block_reduce<SumOp>(s, scratch, lane, sg, nsg);
  for (uint i = lid; i < cols; i += size) y[row * cols + i] = T(precise::exp(float(xr[i]) - m) / s);
}
template [[host_name("softmax_rows_float")]] [[kernel]] decltype(softmax_rows<float>) softmax_rows<float>;
