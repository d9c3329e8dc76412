// uniform_<dtype> and normal_<dtype>: Philox4x32-10 bits mapped to floats by shaders/philox.h, the
// header csrc/cpu/random.cpp includes too, so both backends compute the same values bit for bit.
// One thread per Philox block: it computes the block once and writes the (up to) four elements
// whose logical indices fall in it, wherever the strided output puts them.
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs.h"
#include "philox.h"
using namespace metal;

// Where the element with logical index `local` (row-major over args.shape) of this launch lives.
inline long random_out_index(constant RandomArgs& args, long local) {
  long dst = args.offset;
  for (int d = args.ndim - 1; d >= 0; --d) {
    dst += (local % args.shape[d]) * args.strides[d];
    local /= args.shape[d];
  }
  return dst;
}

// The same for randint's arguments.
inline long random_out_index_n(constant RandintArgs& args, long local) {
  long dst = args.offset;
  for (int d = args.ndim - 1; d >= 0; --d) {
    dst += (local % args.shape[d]) * args.strides[d];
    local /= args.shape[d];
  }
  return dst;
}

// [0, 1) from one word, with as many bits as the target type holds exactly (csrc/cpu/random.cpp).
inline float unit_uniform(bm_u32 w, float) { return bm_uniform_f32(w); }
inline float unit_uniform(bm_u32 w, half) { return bm_uniform_f16_exact(w); }
inline float unit_uniform(bm_u32 w, bfloat) { return bm_uniform_bf16_exact(w); }

// The first Philox block this launch touches (elements index_base .. index_base + numel - 1).
inline long random_first_block(constant RandomArgs& args) { return args.index_base / 4; }

template <typename T>
kernel void random_uniform(device T* out [[buffer(0)]],
                           constant RandomArgs& args [[buffer(1)]],
                           uint gid [[thread_position_in_grid]]) {
  long block = random_first_block(args) + long(gid);
  long end = args.index_base + args.numel;
  if (4 * block >= end) return;
  bm_philox_out r = bm_philox_block(args.seed, args.rng_offset + bm_u64(block));
  for (int lane = 0; lane < 4; ++lane) {
    long i = 4 * block + lane;
    if (i < args.index_base || i >= end) continue;
    // a = low, b = high - low, both rounded to float as on the CPU
    out[random_out_index(args, i - args.index_base)] = T(fma(unit_uniform(r.v[lane], T(0)), args.b, args.a));
  }
}

template <typename T>
kernel void random_normal(device T* out [[buffer(0)]],
                          constant RandomArgs& args [[buffer(1)]],
                          uint gid [[thread_position_in_grid]]) {
  long block = random_first_block(args) + long(gid);
  long end = args.index_base + args.numel;
  if (4 * block >= end) return;
  bm_philox_out r = bm_philox_block(args.seed, args.rng_offset + bm_u64(block));
  for (int lane = 0; lane < 4; ++lane) {
    long i = 4 * block + lane;
    if (i < args.index_base || i >= end) continue;
    // Box-Muller on words (0, 1) for lanes 0 and 1, (2, 3) for lanes 2 and 3; a = mean, b = std
    int w = lane & 2;
    float z = bm_normal_f32(r.v[w], r.v[w + 1], (lane & 1) != 0);
    out[random_out_index(args, i - args.index_base)] = T(fma(z, args.b, args.a));
  }
}

// randint: one thread per element: low + bits % range (philox.h's bm_randint_offset), summed in
// ulong so it wraps as the CPU's uint64 sum; half types go through float as on the CPU.
template <typename T>
kernel void random_randint(device T* out [[buffer(0)]],
                           constant RandintArgs& args [[buffer(1)]],
                           uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  long i = args.index_base + long(gid);
  ulong off = bm_randint_offset(args.seed, args.rng_offset, ulong(i), args.range, args.wide != 0);
  long v = as_type<long>(ulong(args.low) + off);
  out[random_out_index_n(args, long(gid))] = (is_same_v<T, half> || is_same_v<T, bfloat>) ? T(float(v)) : T(v);
}

#define BM_INSTANTIATE_RANDINT(T, NAME, UNUSED) \
  template [[host_name("randint_" #NAME)]] [[kernel]] decltype(random_randint<T>) random_randint<T>;
BM_DTYPES_NUMERIC(BM_INSTANTIATE_RANDINT, _)

#define BM_INSTANTIATE_RANDOM(T, NAME)                                                                 \
  template [[host_name("uniform_" #NAME)]] [[kernel]] decltype(random_uniform<T>) random_uniform<T>; \
  template [[host_name("normal_" #NAME)]] [[kernel]] decltype(random_normal<T>) random_normal<T>;
// Metal has no float64; the other dtypes of the rows' masks are floating only.
BM_INSTANTIATE_RANDOM(float, float32)
BM_INSTANTIATE_RANDOM(half, float16)
BM_INSTANTIATE_RANDOM(bfloat, bfloat16)
