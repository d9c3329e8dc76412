// Helpers shared by the elementwise shaders (unary.metal, binary.metal, where.metal): the compute
// type, operand offsets for the strided and 1-d kernels, and wrapping integer arithmetic.
#pragma once
#include "kargs.h"

// Arithmetic runs in float32 for the 16-bit float types (rounded once on store, as the CPU
// backend does), in the element type otherwise.
template <typename T> struct bm_compute { typedef T type; };
template <> struct bm_compute<half> { typedef float type; };
template <> struct bm_compute<bfloat> { typedef float type; };
// 8- and 16-bit integers compute in int (as C promotes them) and wrap on the store's narrowing
// conversion, which keeps the low bits: the same values as torch's wrapping int8/uint8/int16 math.
template <> struct bm_compute<char> { typedef int type; };
template <> struct bm_compute<uchar> { typedef int type; };
template <> struct bm_compute<short> { typedef int type; };

// Element offsets of the first n operands for linear index i, row-major over args.shape. The
// index math is 32-bit (a launch has fewer than 2^32 threads; 64-bit division is slow on GPUs),
// offsets are 64-bit.
struct bm_offsets {
  long v[BM_EW_OPERANDS];
};
inline bm_offsets bm_strided_offsets(constant ElementwiseArgs& args, uint i, int n) {
  bm_offsets o;
  for (int k = 0; k < n; ++k) o.v[k] = args.offset[k];
  for (int d = args.ndim - 1; d >= 0; --d) {
    uint size = uint(args.shape[d]);
    uint q = i / size;
    long r = long(i - q * size);
    i = q;
    for (int k = 0; k < n; ++k) o.v[k] += r * args.strides[k][d];
  }
  return o;
}

// Operand k's offset in a launch with ndim <= 1 (contiguous, broadcast scalar or one stride).
inline long bm_1d_offset(constant ElementwiseArgs& args, uint i, int k) {
  return args.offset[k] + long(i) * args.strides[k][0];
}

// The 1-d kernels handle elements gid + k * n (n = threads in the grid, k = 0..BM_EW_PER_THREAD-1)
// per pass, loading all of them before storing any: the stores may alias the loads as far as the
// compiler knows, so only this order keeps several loads per thread in flight, which a GPU needs
// to reach its memory bandwidth (a 100M-element add: 65% of peak with one element per thread).
// The host launches numel / BM_EW_PER_THREAD (kargs.h) threads for long launches, numel for short.

// Integers wrap around like torch's (two's complement): compute on the unsigned type and
// reinterpret, never overflowing a signed type.
inline int bm_wrap(uint x) { return metal::as_type<int>(x); }
inline long bm_wrap(ulong x) { return metal::as_type<long>(x); }
