// Every function, type and attribute of the CUDA metal_stdlib stand-in (csrc/cuda/stdlib), in one
// kernel NVRTC must compile without a warning for float, half and bfloat (tests/test_cuda_compile.py).
// The shaders use only part of the stand-in; this keeps the rest compiling. Never run.
#include <metal_stdlib>
using namespace metal;

struct Args { int n; float f; };

template <typename T>
T math_all(T x) {
  T r = exp(x) + exp2(x) + exp10(x) + log(x) + log2(x) + log10(x) + sqrt(x) + rsqrt(x);
  r += sin(x) + cos(x) + tan(x) + asin(x) + acos(x) + atan(x) + sinh(x) + cosh(x) + tanh(x);
  r += asinh(x) + acosh(x) + atanh(x) + sinpi(x) + cospi(x) + floor(x) + ceil(x) + round(x);
  r += rint(x) + trunc(x) + fabs(x) + abs(x) + fract(x) + saturate(x) + sign(x);
  r += pow(x, x) + powr(x, x) + atan2(x, x) + fmod(x, x) + fmin(x, x) + fmax(x, x) + min(x, x);
  r += max(x, x) + copysign(x, x) + fdim(x, x) + step(x, x) + divide(x, x) + fma(x, x, x);
  r += clamp(x, x, x) + mix(x, x, x) + fmin3(x, x, x) + fmax3(x, x, x) + smoothstep(x, x, x);
  r += precise::exp(x) + fast::sin(x) + metal::precise::sqrt(x);
  return r;
}

template <typename T>
kernel void cov(device T* out [[buffer(0)]], device atomic_int* ai [[buffer(1)]],
                device atomic_uint* au [[buffer(2)]], device atomic_float* af [[buffer(3)]],
                device atomic_ulong* al [[buffer(4)]], constant Args& args [[buffer(5)]],
                device float& total [[buffer(6)]], threadgroup float* dyn [[threadgroup(0)]],
                uint3 gid3 [[thread_position_in_grid]], ushort2 tig [[thread_position_in_threadgroup]],
                uint3 group [[threadgroup_position_in_grid]], uint3 tpt [[threads_per_threadgroup]],
                uint3 dtpt [[dispatch_threads_per_threadgroup]], uint3 groups [[threadgroups_per_grid]],
                uint3 tpg [[threads_per_grid]], uint tid [[thread_index_in_threadgroup]],
                ushort lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                uint nsg [[simdgroups_per_threadgroup]], uint w [[threads_per_simdgroup]],
                uint ew [[thread_execution_width]]) {
  threadgroup T shared[64];
  threadgroup int counter;
  T x = out[tid];
  shared[tid % 64] = x;
  threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
  simdgroup_barrier(mem_flags::mem_none);
  x = T(float(x) + float(shared[(tid + 1) % 64]));
  x = math_all(x);
  x += simd_sum(x) + simd_product(x) + simd_min(x) + simd_max(x);
  x += simd_prefix_inclusive_sum(x) + simd_prefix_exclusive_sum(x);
  x += simd_prefix_inclusive_product(x) + simd_prefix_exclusive_product(x);
  x += simd_shuffle(x, lane) + simd_broadcast(x, 0) + simd_shuffle_xor(x, 1) + simd_shuffle_down(x, 1);
  x += simd_shuffle_up(x, 1) + simd_shuffle_rotate_down(x, 1) + simd_shuffle_rotate_up(x, 1);
  x += simd_broadcast_first(x);
  int i = int(tid);
  i += simd_and(i) + simd_or(i) + simd_xor(i) + simd_sum(i) + simd_max(i) + popcount(i) + clz(i) + ctz(i);
  i += absdiff(i, 3) + clamp(i, 0, 5) + abs(i) + min(i, 2) + max(i, 2) + mulhi(i, i);
  long l = simd_shuffle_xor(long(i), 1) + simd_sum(long(i));
  bool b = simd_all(x > T(0)) || simd_any(isnan(x)) || simd_is_first() || isinf(x) || isfinite(x) || signbit(x) || isnormal(x);
  simd_vote v = simd_ballot(b);
  b = b && v.any() && !v.all() && bool(simd_active_threads_mask().any());
  atomic_store_explicit(ai, i, memory_order_relaxed);
  i += atomic_load_explicit(ai, memory_order_relaxed) + atomic_exchange_explicit(ai, 2, memory_order_relaxed);
  i += atomic_fetch_add_explicit(ai, 1, memory_order_relaxed) + atomic_fetch_sub_explicit(ai, 1, memory_order_relaxed);
  i += atomic_fetch_and_explicit(ai, 1, memory_order_relaxed) + atomic_fetch_or_explicit(ai, 1, memory_order_relaxed);
  i += atomic_fetch_xor_explicit(ai, 1, memory_order_relaxed) + atomic_fetch_min_explicit(ai, 1, memory_order_relaxed);
  i += atomic_fetch_max_explicit(ai, 1, memory_order_relaxed);
  int expected = 0;
  b = b && atomic_compare_exchange_weak_explicit(ai, &expected, 1, memory_order_relaxed, memory_order_relaxed);
  uint u = atomic_fetch_add_explicit(au, 1u, memory_order_relaxed) + atomic_fetch_min_explicit(au, 1u, memory_order_relaxed);
  float f = atomic_fetch_add_explicit(af, 1.0, memory_order_relaxed) + atomic_fetch_max_explicit(af, 1.0, memory_order_relaxed);
  ulong ul = atomic_fetch_add_explicit(al, 1ul, memory_order_relaxed) + atomic_fetch_max_explicit(al, 1ul, memory_order_relaxed);
  if (tid == 0) atomic_store_explicit(reinterpret_cast<threadgroup atomic_int*>(&counter), 0, memory_order_relaxed);
  float4 v4 = float4(1.0, 2.0, 3.0, 4.0);
  v4.xy = v4.zw;
  v4.zw += float2(1.0);
  float3 v3 = float3(v4.xyz) + float3(v4.x, v4.y, 1.0);
  half4 h4 = half4(v4);
  bfloat2 bf2 = bfloat2(h4.xy);
  int2 i2 = int2(v4.xy) + as_type<int2>(v4.zw);
  uint2 u2 = as_type<uint2>(l);
  float s = dot(v3, v3) + length(v3) + distance(v3, v3) + length_squared(v4) + normalize(v3).x + cross(v3, v3).y;
  s += all(v4 > 0.0) ? 1.0 : 0.0;
  s += any(select(v4, v4, v4 > 1.0) > 2.0) ? 1.0 : 0.0;
  v4 = fma(v4, v4, v4) + clamp(v4, 0.0, 1.0) + mix(v4, v4, 0.5) + min(v4, v4) + exp(v4) + step(0.5, v4);
  h4 = h4 * half(2) + half4(0.5h) - exp(h4);
  s += float(h4.w) + float(bf2.y) + float(i2.x) + float(u2.y) + v4.w + float(sizeof(float3));
  s += numeric_limits<float>::max() + float(numeric_limits<half>::lowest()) + float(numeric_limits<int>::max());
  s += is_floating_point_v<T> ? 1.0 : 0.0;
  s += is_same_v<T, half> ? INFINITY : NAN + FLT_MAX + M_PI_F + float(HALF_MAX);
  typedef conditional_t<is_integral_v<T>, long, float> Acc;
  Acc acc = Acc(s);
  float sc, sn = sincos(s, sc);
  int e = 0;
  s += frexp(s, e) + ldexp(s, e) + sn + sc;
  dyn[tid] = s;
  total = float(acc) + f + float(ul) + float(u) + (b ? 1.0 : 0.0) + dyn[0] + float(gid3.x + tig.y + group.z + tpt.x + dtpt.y);
  total += float(groups.x + tpg.z + sg + nsg + w + ew) + args.f + float(args.n);
  out[tid] = x;
}

template [[host_name("cov_float")]] [[kernel]] decltype(cov<float>) cov<float>;
template [[host_name("cov_half")]] [[kernel]] decltype(cov<half>) cov<half>;
template [[host_name("cov_bfloat")]] [[kernel]] decltype(cov<bfloat>) cov<bfloat>;
