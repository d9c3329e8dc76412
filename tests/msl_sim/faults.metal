// Kernels with bugs the simulator must report as errors (simulator tests).
#include <metal_stdlib>
using namespace metal;

kernel void partial_barrier(device float* out [[buffer(0)]], uint lid [[thread_index_in_threadgroup]]) {
  if (lid >= 5) return;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = 1.0;
}

kernel void split_barriers(device float* out [[buffer(0)]], uint lid [[thread_index_in_threadgroup]]) {
  if (lid % 2 == 0) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
  } else {
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  out[lid] = 1.0;
}

kernel void divergent_simd(device float* out [[buffer(0)]], uint lane [[thread_index_in_simdgroup]]) {
  float x = 1.0;
  if (lane < 16) x = simd_sum(x);
  else x = simd_max(x);
  out[lane] = x;
}

kernel void write_past_end(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  out[gid] = float(gid);
}

// The fault happens after a barrier, inside a fiber.
kernel void fault_after_barrier(device const float* in [[buffer(0)]],
                                device float* out [[buffer(1)]],
                                uint gid [[thread_position_in_grid]]) {
  threadgroup float tmp[64];
  tmp[gid % 64] = in[gid];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = tmp[(gid + 1) % 64] + in[gid + 100];
}

kernel void threadgroup_overrun(device float* out [[buffer(0)]], uint lid [[thread_index_in_threadgroup]]) {
  threadgroup float small[16];
  small[lid] = 1.0;
  out[lid] = small[lid];
}

kernel void too_much_threadgroup_memory(device float* out [[buffer(0)]], uint lid [[thread_index_in_threadgroup]]) {
  threadgroup float big[9000];
  big[lid] = 1.0;
  out[lid] = big[lid];
}

// The same host name as a kernel in types.metal: looking it up must fail.
[[host_name("defined_twice")]] kernel void defined_twice_a(device float* out [[buffer(0)]]) { out[0] = 1.0; }
