// Atomics on device and threadgroup memory (simulator tests).
#include <metal_stdlib>
using namespace metal;

kernel void histogram(device const uint* in [[buffer(0)]],
                      device atomic_uint* bins [[buffer(1)]],
                      device atomic_float* total [[buffer(2)]],
                      uint gid [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit(&bins[in[gid] % 8], 1u, memory_order_relaxed);
  atomic_fetch_add_explicit(total, float(in[gid]), memory_order_relaxed);
  atomic_fetch_max_explicit(bins + 8, in[gid], memory_order_relaxed);
}

kernel void count_odd(device const uint* in [[buffer(0)]],
                      device uint* out [[buffer(1)]],
                      uint gid [[thread_position_in_grid]],
                      uint lid [[thread_index_in_threadgroup]],
                      uint group [[threadgroup_position_in_grid]]) {
  threadgroup atomic_uint count;
  if (lid == 0) atomic_store_explicit(&count, 0u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (in[gid] % 2 == 1) atomic_fetch_add_explicit(&count, 1u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid == 0) out[group] = atomic_load_explicit(&count, memory_order_relaxed);
}
