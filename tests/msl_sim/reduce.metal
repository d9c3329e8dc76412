// Reductions through threadgroup memory and barriers (simulator tests).
#include <metal_stdlib>
using namespace metal;

// Tree reduction over a static threadgroup array: out[group] = sum of the group's inputs.
template <typename T>
kernel void tree_sum(device const T* in [[buffer(0)]],
                     device T* out [[buffer(1)]],
                     constant uint& n [[buffer(2)]],
                     uint gid [[thread_position_in_grid]],
                     uint lid [[thread_position_in_threadgroup]],
                     uint group [[threadgroup_position_in_grid]],
                     uint size [[threads_per_threadgroup]]) {
  threadgroup T partial[256];
  partial[lid] = gid < n ? in[gid] : T(0);
  for (uint s = size / 2; s > 0; s /= 2) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid < s) partial[lid] += partial[lid + s];
  }
  if (lid == 0) out[group] = partial[0];
}
template [[host_name("tree_sum_float")]] [[kernel]] decltype(tree_sum<float>) tree_sum<float>;
template [[host_name("tree_sum_int")]] [[kernel]] decltype(tree_sum<int>) tree_sum<int>;

// The same through dynamic threadgroup memory sized by the host, and a helper taking the
// threadgroup pointer (the barrier is only visible through the helper).
inline void fold(threadgroup float* buf, uint lid, uint s) {
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid < s) buf[lid] = buf[lid] + buf[lid + s];
}

kernel void dynamic_sum(device const float* in [[buffer(0)]],
                        device float* out [[buffer(1)]],
                        threadgroup float* buf [[threadgroup(0)]],
                        uint gid [[thread_position_in_grid]],
                        uint lid [[thread_index_in_threadgroup]],
                        uint group [[threadgroup_position_in_grid]],
                        uint size [[threads_per_threadgroup]]) {
  buf[lid] = in[gid];
  for (uint s = size / 2; s > 0; s /= 2) fold(buf, lid, s);
  if (lid == 0) out[group] = buf[0];
}

// Two-level reduction: simd_sum inside each simdgroup, then the simdgroup leaders' partials.
kernel void simd_tree_sum(device const float* in [[buffer(0)]],
                          device float* out [[buffer(1)]],
                          constant uint& n [[buffer(2)]],
                          uint gid [[thread_position_in_grid]],
                          uint lane [[thread_index_in_simdgroup]],
                          uint sg [[simdgroup_index_in_threadgroup]],
                          uint nsg [[simdgroups_per_threadgroup]],
                          uint group [[threadgroup_position_in_grid]]) {
  threadgroup float partials[32];
  float x = gid < n ? in[gid] : 0.0;
  x = simd_sum(x);
  if (lane == 0) partials[sg] = x;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0) {
    float p = lane < nsg ? partials[lane] : 0.0;
    p = simd_sum(p);
    if (lane == 0) out[group] = p;
  }
}
