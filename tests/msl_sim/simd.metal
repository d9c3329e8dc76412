// SIMD-group functions across full and partial simdgroups (simulator tests).
#include <metal_stdlib>
using namespace metal;

#define NOUT 12

kernel void simd_ops(device const float* in [[buffer(0)]],
                     device float* out [[buffer(1)]],
                     device uint* votes [[buffer(2)]],
                     uint gid [[thread_position_in_grid]],
                     uint lane [[thread_index_in_simdgroup]]) {
  float x = in[gid];
  device float* o = out + gid * NOUT;
  o[0] = simd_sum(x);
  o[1] = simd_max(x);
  o[2] = simd_min(x);
  o[3] = simd_prefix_exclusive_sum(x);
  o[4] = simd_prefix_inclusive_sum(x);
  o[5] = simd_shuffle_down(x, 1);
  o[6] = simd_shuffle_up(x, 2);
  o[7] = simd_shuffle_xor(x, 3);
  o[8] = simd_broadcast(x, 2);
  o[9] = simd_shuffle(x, (lane + 5) % 32);
  o[10] = simd_broadcast_first(x);
  o[11] = simd_is_first() ? 1.0 : 0.0;
  votes[gid] = uint(ulong(simd_ballot(x > 10.0)));
}

// Threads that return early are inactive: the sum covers the others only.
kernel void simd_sum_active(device const float* in [[buffer(0)]],
                            device float* out [[buffer(1)]],
                            constant uint& n [[buffer(2)]],
                            uint gid [[thread_position_in_grid]]) {
  if (gid >= n) return;
  float2 v = float2(in[gid], 1.0);
  float2 s = simd_sum(v);
  out[gid * 2] = s.x;
  out[gid * 2 + 1] = s.y;
}

// A shuffle-down reduction loop, the way hand-written reductions do it.
kernel void shuffle_reduce(device const int* in [[buffer(0)]],
                           device int* out [[buffer(1)]],
                           uint gid [[thread_position_in_grid]],
                           uint lane [[thread_index_in_simdgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]]) {
  int x = in[gid];
  for (ushort d = 16; d > 0; d /= 2) x += simd_shuffle_down(x, d);
  if (lane == 0) out[sg] = x;
}
