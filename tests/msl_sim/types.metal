// Vector types, swizzles, conversions and half arithmetic (simulator tests).
#include <metal_stdlib>
using namespace metal;

struct VecOut {
  float4 swizzled;
  float4 written;
  float3 three;  // 16 bytes, at offset 32
  int4 converted;
  uint2 bits;
  float len;
  float pad;
};

kernel void vec_ops(device const float4* in [[buffer(0)]],
                    device VecOut* out [[buffer(1)]],
                    uint gid [[thread_position_in_grid]]) {
  float4 v = in[gid];
  out[gid].swizzled = v.wzyx;
  float4 w = v;
  w.xy = v.zw;
  w.zw += float2(10.0, 20.0);
  w.x *= 2;
  out[gid].written = w;
  out[gid].three = float3(v.xy, 7) * 2;
  out[gid].converted = int4(v * 10.0);
  out[gid].bits = as_type<uint2>(v.xy);
  out[gid].len = length(v.xyz) + dot(v, float4(1)) * 0 + select(0.0, 1.0, all(v == v)) - 1;
}

kernel void half_ops(device const half* a [[buffer(0)]],
                     device const half* b [[buffer(1)]],
                     device half* out [[buffer(2)]],
                     uint gid [[thread_position_in_grid]]) {
  half x = a[gid], y = b[gid];
  device half* o = out + gid * 6;
  o[0] = x + y;                          // one rounding
  o[1] = x * y + 0.5h;                   // rounded after * and after +
  o[2] = half(float(x) * float(y) + 0.5);  // rounded once
  o[3] = max(x, y);
  half2 v = half2(x, y) * 2.0h;
  o[4] = v.y;
  o[5] = exp(x);
}

// A multi-dimensional grid: every thread records its ids.
kernel void grid_ids(device uint4* out [[buffer(0)]],
                     constant uint3& grid [[buffer(1)]],
                     uint3 pos [[thread_position_in_grid]],
                     uint3 tpos [[thread_position_in_threadgroup]],
                     uint3 tsize [[threads_per_threadgroup]],
                     uint3 gpos [[threadgroup_position_in_grid]],
                     uint2 tpg [[threads_per_grid]],
                     ushort idx [[thread_index_in_threadgroup]]) {
  uint i = (pos.z * grid.y + pos.y) * grid.x + pos.x;
  out[i * 4 + 0] = uint4(pos, 1);
  out[i * 4 + 1] = uint4(tpos, idx);
  out[i * 4 + 2] = uint4(tsize, tpg.x);
  out[i * 4 + 3] = uint4(gpos, tpg.y);
}

[[max_total_threads_per_threadgroup(64)]] kernel void limited(device float* out [[buffer(0)]],
                                                            uint gid [[thread_position_in_grid]]) {
  out[gid] = 1.0;
}

// See faults.metal: a host name defined in two files.
[[host_name("defined_twice")]] kernel void defined_twice_b(device float* out [[buffer(0)]]) { out[0] = 2.0; }
