// Simdgroup and threadgroup all-reductions shared by reduce.metal and softmax.metal (include it
// after `using namespace metal;`).
//
// Every helper returns the reduction in ALL lanes (simd_sum/simd_max do; the shuffle trees use
// xor butterflies), so a kernel can use a mean or a maximum right after reducing it.
// Threadgroups are whole simdgroups of BM_SIMD_WIDTH lanes (the host picks multiples of 32).
#pragma once

#define BM_SIMD_WIDTH 32

// MSL's simd shuffles move 32-bit (and smaller) types; 64-bit values move as two halves.
inline float simd_xor_shuffle(float v, ushort m) { return simd_shuffle_xor(v, m); }
inline int simd_xor_shuffle(int v, ushort m) { return simd_shuffle_xor(v, m); }
inline long simd_xor_shuffle(long v, ushort m) {
  return as_type<long>(simd_shuffle_xor(as_type<uint2>(v), m));
}

// int64 sums and products wrap around, as torch's do: added and multiplied as ulong, where
// overflow is defined (a signed overflow is undefined behaviour in the C++ the simulator runs the
// shaders as; UBSan reported prod's). The float overloads let a template use either state type.
inline long wrap_add(long a, long b) { return as_type<long>(as_type<ulong>(a) + as_type<ulong>(b)); }
inline long wrap_mul(long a, long b) { return as_type<long>(as_type<ulong>(a) * as_type<ulong>(b)); }
inline float wrap_add(float a, float b) { return a + b; }
inline float wrap_mul(float a, float b) { return a * b; }

// Sums. float uses the hardware reduction; integer sums are exact (modulo 2^64), so a butterfly
// gives every lane the same value.
inline float simd_all_sum(float v) { return simd_sum(v); }
inline float2 simd_all_sum(float2 v) { return simd_sum(v); }
inline long simd_all_sum(long v) {
  for (ushort m = BM_SIMD_WIDTH / 2; m > 0; m >>= 1) v = wrap_add(v, simd_xor_shuffle(v, m));
  return v;
}

// Maximum / minimum. Floats propagate NaN (simd_max alone, like fmax, would drop it).
inline float simd_all_max(float v) {
  float m = simd_max(v);
  return simd_any(v != v) ? NAN : m;
}
inline float simd_all_min(float v) {
  float m = simd_min(v);
  return simd_any(v != v) ? NAN : m;
}
inline int simd_all_max(int v) { return simd_max(v); }
inline int simd_all_min(int v) { return simd_min(v); }
inline long simd_all_max(long v) {
  for (ushort m = BM_SIMD_WIDTH / 2; m > 0; m >>= 1) {
    long o = simd_xor_shuffle(v, m);
    v = v < o ? o : v;
  }
  return v;
}
inline long simd_all_min(long v) {
  for (ushort m = BM_SIMD_WIDTH / 2; m > 0; m >>= 1) {
    long o = simd_xor_shuffle(v, m);
    v = o < v ? o : v;
  }
  return v;
}

// Ops for block_all_reduce: S (state), identity(), simd_reduce(S) giving the result in all lanes.
template <typename T>
struct AllSum {
  typedef T S;
  static S identity() { return S(0); }
  static S simd_reduce(S v) { return simd_all_sum(v); }
};
struct AllMaxNaN {  // float maximum, NaN wins
  typedef float S;
  static S identity() { return -INFINITY; }
  static S simd_reduce(S v) { return simd_all_max(v); }
};

// Reduction of one value per thread over the whole threadgroup; every thread gets the result.
// Each simdgroup reduces, its lane 0 parks the partial in `scratch` (one slot per simdgroup),
// then every simdgroup reduces the partials (redundantly, which saves a broadcast barrier). The
// trailing barrier lets the caller reuse `scratch` for its next reduction.
template <typename Op>
inline typename Op::S block_all_reduce(typename Op::S v, threadgroup typename Op::S* scratch, uint lane, uint sg,
                                       uint nsg) {
  v = Op::simd_reduce(v);
  if (lane == 0) scratch[sg] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  v = lane < nsg ? scratch[lane] : Op::identity();
  v = Op::simd_reduce(v);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return v;
}
