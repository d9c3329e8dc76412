// Control kernels of the simulator's race detector: each bug below must be reported, each fixed
// twin must run clean (tests/cpp/test_msl_sim_races.cpp, tests/test_sim_races.py). They are
// compiled into the simulator only (never into the Metal library) and run through
// bessemer._core._sim_run_control(name, threads, threadgroup, nbuffers): every buffer is `threads`
// uints, zeroed.
#include <metal_stdlib>
using namespace metal;

// Each lane adds its left neighbour's value to its own, in place. BUG: no barrier between the
// read of the neighbour and the write of the own slot, which the neighbour's right lane reads.
[[host_name("msl_sim_control_missing_barrier")]] kernel void missing_barrier(
    device uint* out [[buffer(0)]], uint lid [[thread_index_in_threadgroup]]) {
  threadgroup uint partial[256];
  partial[lid] = lid + 1;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint left = lid > 0 ? partial[lid - 1] : 0;
  partial[lid] = left + partial[lid];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = partial[lid];
}

[[host_name("msl_sim_control_missing_barrier_fixed")]] kernel void missing_barrier_fixed(
    device uint* out [[buffer(0)]], uint lid [[thread_index_in_threadgroup]]) {
  threadgroup uint partial[256];
  partial[lid] = lid + 1;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint left = lid > 0 ? partial[lid - 1] : 0;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  partial[lid] = left + partial[lid];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = partial[lid];
}

// BUG: only the lower half of `scratch` is written, every lane reads the mirrored slot.
[[host_name("msl_sim_control_read_before_write")]] kernel void read_before_write(
    device uint* out [[buffer(0)]], uint lid [[thread_index_in_threadgroup]],
    uint n [[threads_per_threadgroup]]) {
  threadgroup uint scratch[256];
  if (lid < n / 2) scratch[lid] = lid;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = scratch[n - 1 - lid];
}

[[host_name("msl_sim_control_read_before_write_fixed")]] kernel void read_before_write_fixed(
    device uint* out [[buffer(0)]], uint lid [[thread_index_in_threadgroup]],
    uint n [[threads_per_threadgroup]]) {
  threadgroup uint scratch[256];
  scratch[lid] = lid;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = scratch[n - 1 - lid];
}

// BUG: threads gid and gid + 16 store to one element (in one threadgroup or in two).
[[host_name("msl_sim_control_racing_device_write")]] kernel void racing_device_write(
    device uint* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  out[gid % 16] = gid + 1;
}

[[host_name("msl_sim_control_racing_device_write_fixed")]] kernel void racing_device_write_fixed(
    device atomic_uint* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit(&out[gid % 16], gid + 1, memory_order_relaxed);
}

// The result depends on the order the lanes run in: each takes a ticket from an atomic counter
// (not a race) and writes its id at its ticket. Run in index order it is the identity.
[[host_name("msl_sim_control_lane_order")]] kernel void lane_order(
    device uint* out [[buffer(0)]], device atomic_uint* counter [[buffer(1)]],
    uint gid [[thread_position_in_grid]]) {
  uint ticket = atomic_fetch_add_explicit(counter, 1u, memory_order_relaxed);
  out[ticket] = gid;
}

// The same within a threadgroup, between barriers (the lanes run as fibers).
[[host_name("msl_sim_control_lane_order_group")]] kernel void lane_order_group(
    device uint* out [[buffer(0)]], uint lid [[thread_index_in_threadgroup]]) {
  threadgroup atomic_uint next[1];
  if (lid == 0) atomic_store_explicit(&next[0], 0u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint ticket = atomic_fetch_add_explicit(&next[0], 1u, memory_order_relaxed);
  out[ticket] = lid;
}

[[host_name("msl_sim_control_lane_order_fixed")]] kernel void lane_order_fixed(
    device uint* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  out[gid] = gid;
}

// A simd reduction does not order threadgroup memory (see race.h): lane 0 reads what lane 1
// wrote before the simd_sum with no threadgroup barrier between.
[[host_name("msl_sim_control_simd_is_not_a_barrier")]] kernel void simd_is_not_a_barrier(
    device uint* out [[buffer(0)]], uint lid [[thread_index_in_threadgroup]]) {
  threadgroup uint slot[256];
  slot[lid] = lid;
  uint total = simd_sum(lid);
  out[lid] = total + slot[lid ^ 1];
}

// A barrier without mem_threadgroup orders execution but not threadgroup memory.
[[host_name("msl_sim_control_device_only_barrier")]] kernel void device_only_barrier(
    device uint* out [[buffer(0)]], uint lid [[thread_index_in_threadgroup]]) {
  threadgroup uint slot[256];
  slot[lid] = lid;
  threadgroup_barrier(mem_flags::mem_device);
  out[lid] = slot[lid ^ 1];
}

// Within one threadgroup, threadgroup_barrier(mem_device) orders device memory: lane 0 writes,
// the others read it after the barrier. Clean.
[[host_name("msl_sim_control_device_barrier_orders")]] kernel void device_barrier_orders(
    device uint* out [[buffer(0)]], uint lid [[thread_index_in_threadgroup]]) {
  if (lid == 0) out[0] = 7;
  threadgroup_barrier(mem_flags::mem_device);
  if (lid > 0) out[lid] = out[0] + lid;
}

// An in-place shift through two bindings of one buffer (buffer(1) is buffer(0) one element on):
// thread gid reads element gid and writes element gid + 1, which thread gid + 1 reads. Reads
// through a const pointer are tracked because the two bindings overlap.
[[host_name("msl_sim_control_overlapping_copy")]] kernel void overlapping_copy(
    device const uint* in [[buffer(0)]], device uint* out [[buffer(1)]], uint gid [[thread_position_in_grid]]) {
  out[gid] = in[gid] + 1;
}
