// Argument structs shared by the host (csrc/metal) and the shaders. Both sides must see the same
// layout: only fixed-size integer fields, each naturally aligned, no pointers.
#pragma once

#ifdef __METAL_VERSION__
typedef int bm_i32;
typedef uint bm_u32;
typedef long bm_i64;  // MSL long is 64-bit
#else
#include <cstdint>
typedef int32_t bm_i32;
typedef uint32_t bm_u32;
typedef int64_t bm_i64;
#endif

// Kernels take tensors of up to this many dimensions after the host merged contiguous ones.
#define BM_MAX_DIMS 8

// copy_strided_<dtype>: out[out_offset + sum(i_d * out_strides[d])] = in[in_offset + ...] for
// every index (i_0..i_{ndim-1}) of `shape`; offsets and strides count elements, not bytes.
struct CopyStridedArgs {
  bm_i64 numel;
  bm_i64 in_offset;
  bm_i64 out_offset;
  bm_i32 ndim;
  bm_i32 pad_;
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 in_strides[BM_MAX_DIMS];
  bm_i64 out_strides[BM_MAX_DIMS];
};

// fill_<dtype>: every element of a strided tensor := value (ivalue for bool/int dtypes, fvalue else).
struct FillArgs {
  bm_i64 numel;
  bm_i64 offset;
  bm_i32 ndim;
  bm_i32 pad_;
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 strides[BM_MAX_DIMS];
  bm_i64 ivalue;
  float fvalue;
  bm_i32 pad2_;
};

// arange_<dtype>: out[offset + i * stride] = start + i * step (integer math when is_int).
struct ArangeArgs {
  bm_i64 n;
  bm_i64 offset;
  bm_i64 stride;
  bm_i64 istart;
  bm_i64 istep;
  float fstart;
  float fstep;
  bm_i32 is_int;
  bm_i32 pad_;
};

// Reductions (shaders/reduce.metal). The host splits the input's dims into kept dims (one output
// element per index) and reduced dims, drops size-1 dims and merges neighbours that are
// contiguous, so each group has at most BM_MAX_DIMS dims (red_ndim >= 1: a 0-d input or a
// reduction over size-1 dims gets one dim of size 1). Reduced elements are numbered row-major in
// the reduced dims' logical order (argmax/argmin return that number). Offsets/strides in elements.
struct ReduceArgs {
  bm_i64 n_out;        // product of kept_shape
  bm_i64 n_red;        // product of red_shape
  bm_i64 in_offset;
  bm_i64 out_offset;
  bm_i32 kept_ndim;
  bm_i32 red_ndim;
  bm_i64 kept_shape[BM_MAX_DIMS];
  bm_i64 kept_in_strides[BM_MAX_DIMS];
  bm_i64 kept_out_strides[BM_MAX_DIMS];
  bm_i64 red_shape[BM_MAX_DIMS];
  bm_i64 red_strides[BM_MAX_DIMS];
  float correction;    // var: divisor is max(n_red - correction, 0)
  bm_i32 n_split;      // reduce_*_partial/merge: threadgroups (chunks) per output, else 1
  bm_i64 chunk;        // reduced elements per chunk (the last chunk may be shorter)
};

// softmax / log_softmax along one dim of length `len` (shaders/softmax.metal). The other dims,
// merged like ReduceArgs' kept dims, number the rows; is_log selects log_softmax.
struct SoftmaxArgs {
  bm_i64 n_rows;
  bm_i64 len;
  bm_i64 in_offset;
  bm_i64 out_offset;
  bm_i64 in_stride;    // along the softmax dim
  bm_i64 out_stride;
  bm_i32 ndim;
  bm_i32 is_log;
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 in_strides[BM_MAX_DIMS];
  bm_i64 out_strides[BM_MAX_DIMS];
};
