// Argument structs shared by the host (csrc/metal) and the shaders. Both sides must see the same
// layout: only fixed-size integer fields, each naturally aligned, no pointers.
#pragma once

#ifdef __METAL_VERSION__
typedef int bm_i32;
typedef uint bm_u32;
typedef long bm_i64;  // MSL long is 64-bit
typedef ulong bm_u64;
#else
#include <cstdint>
typedef int32_t bm_i32;
typedef uint32_t bm_u32;
typedef int64_t bm_i64;
typedef uint64_t bm_u64;
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

// uniform_<dtype> / normal_<dtype>: element i of the draw (i = index_base + the element's logical
// row-major index in this launch) uses Philox block rng_offset + i / 4, word i % 4, under `seed`,
// and lands at offset + sum(i_d * strides[d]). a/b: low and high - low (uniform), or mean and std
// (normal), rounded to float on the host exactly as csrc/cpu/random.cpp rounds them.
struct RandomArgs {
  bm_i64 numel;       // elements in this launch
  bm_i64 index_base;  // logical index of this launch's first element within the whole draw
  bm_i64 offset;
  bm_i32 ndim;
  bm_i32 pad_;
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 strides[BM_MAX_DIMS];
  bm_u64 seed;
  bm_u64 rng_offset;
  float a;
  float b;
};

// randint_<dtype>: the RandomArgs layout, with the integer range instead of floats (op_table.h's
// randint row): out = low + bits % range, `wide` when range > 2**32 (two words per element).
struct RandintArgs {
  bm_i64 numel;
  bm_i64 index_base;
  bm_i64 offset;
  bm_i32 ndim;
  bm_i32 wide;
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 strides[BM_MAX_DIMS];
  bm_u64 seed;
  bm_u64 rng_offset;
  bm_i64 low;
  bm_u64 range;
};

// matmul_<dtype>: out[b] (M x N) = a[b] (M x K) @ b[b] (K x N) for every batch entry b. Element (i, j)
// of a is at a_offset + (batch offset) + i * a_rs + j * a_cs, likewise b and out; a batch entry's
// offset comes from decomposing its index over batch_shape (batch_ndim merged dims, possibly with
// zero strides). a_k_fast / b_k_fast: the operand is unit-stride along K, so tile loads walk K.
struct MatmulArgs {
  bm_i64 M;
  bm_i64 N;
  bm_i64 K;
  bm_i64 a_offset;
  bm_i64 b_offset;
  bm_i64 out_offset;
  bm_i64 a_rs;
  bm_i64 a_cs;
  bm_i64 b_rs;
  bm_i64 b_cs;
  bm_i64 out_rs;
  bm_i64 out_cs;
  bm_i32 batch_ndim;
  bm_i32 a_k_fast;
  bm_i32 b_k_fast;
  bm_i32 pad_;
  bm_i64 batch_shape[BM_MAX_DIMS];
  bm_i64 a_bstrides[BM_MAX_DIMS];
  bm_i64 b_bstrides[BM_MAX_DIMS];
  bm_i64 out_bstrides[BM_MAX_DIMS];
};

// Elementwise kernels (unary.metal, binary.metal, where.metal): operand 0 is the output, operands
// 1..n the inputs in order, all of `shape` (inputs arrive broadcast, with zero strides). Element
// k of operand j is at offset[j] + sum(i_d * strides[j][d]). The `_1d` kernels read only
// strides[j][0] (ndim <= 1: contiguous operands, broadcast scalars, or one strided dim).
#define BM_EW_OPERANDS 4
// Elements per thread of a long 1-d elementwise launch (shaders/elementwise.h says why).
#define BM_EW_PER_THREAD 4
// clamp's flags: which bounds are given; NAN: a NaN bound, every result is NaN (fvalue[0] holds it).
#define BM_CLAMP_HAS_LO 1
#define BM_CLAMP_HAS_HI 2
#define BM_CLAMP_NAN 4
struct ElementwiseArgs {
  bm_i64 numel;
  bm_i32 ndim;
  bm_i32 flags;  // op parameters (clamp)
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 offset[BM_EW_OPERANDS];
  bm_i64 strides[BM_EW_OPERANDS][BM_MAX_DIMS];
  bm_i64 ivalue[2];  // op parameters for integer dtypes (clamp bounds)
  float fvalue[4];   // op parameters for floating dtypes, in the float32 compute type (nan_to_num: 3)
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

// max_pool2d / avg_pool2d / adaptive_avg_pool2d (shaders/pool.metal): one thread per output element
// of a (N, C, OH, OW) output read from a (N, C, H, W) input, element strides in [n, c, h, w] order.
// Thread t of a launch handles output element t of planes plane_base.. (plane = n * C + c), so
// launches can be split by planes. Window fields follow torch's arguments; divisor 0: none.
struct PoolArgs {
  bm_i64 n_out;        // output elements in this launch
  bm_i64 plane_base;
  bm_i64 C;
  bm_i64 H;
  bm_i64 W;
  bm_i64 OH;
  bm_i64 OW;
  bm_i64 in_offset;
  bm_i64 out_offset;
  bm_i64 in_strides[4];
  bm_i64 out_strides[4];
  bm_i32 ksize[2];     // kernel_size ("kernel" is an MSL keyword)
  bm_i32 stride[2];
  bm_i32 padding[2];
  bm_i32 dilation[2];
  bm_i32 count_include_pad;
  bm_i32 divisor;
};

// layer_norm over the trailing dims (shaders/norm.metal). Rows: the leading dims, merged over input
// and output strides (row_ndim <= BM_MAX_DIMS; the host splits launches beyond that). A row's
// n_cols elements: the trailing dims, merged likewise (col_ndim <= BM_MAX_DIMS; the host copies
// rarer inputs first), numbered row-major; weight and bias are dense over that numbering from
// their own offsets. Offsets and strides in elements.
struct LayerNormArgs {
  bm_i64 n_rows;
  bm_i64 n_cols;
  bm_i64 in_offset;
  bm_i64 out_offset;
  bm_i64 w_offset;
  bm_i64 b_offset;
  bm_i32 row_ndim;
  bm_i32 col_ndim;
  bm_i64 row_shape[BM_MAX_DIMS];
  bm_i64 row_in_strides[BM_MAX_DIMS];
  bm_i64 row_out_strides[BM_MAX_DIMS];
  bm_i64 col_shape[BM_MAX_DIMS];
  bm_i64 col_in_strides[BM_MAX_DIMS];
  bm_i64 col_out_strides[BM_MAX_DIMS];
  float eps;
  bm_i32 has_weight;
  bm_i32 has_bias;
  bm_i32 pad_;
};

// dropout_<dtype> (shaders/nn_misc.metal): element i of the call (i = index_base + the element's
// logical row-major index in this launch) is kept iff bm_uniform_f32(word i % 4 of Philox block
// rng_offset + i / 4 under seed) >= p, and then scaled: out = in * (kept ? scale : 0). p and
// scale are rounded to float on the host as csrc/cpu/nn_misc.cpp rounds them.
struct DropoutArgs {
  bm_i64 numel;       // elements in this launch
  bm_i64 index_base;  // logical index of this launch's first element within the whole call
  bm_i64 out_offset;
  bm_i64 in_offset;
  bm_i32 ndim;
  bm_i32 pad_;
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 out_strides[BM_MAX_DIMS];
  bm_i64 in_strides[BM_MAX_DIMS];
  bm_u64 seed;
  bm_u64 rng_offset;
  float p;
  float scale;
};

// embedding_<dtype>_<index dtype>: out row r (r numbers the index tensor's elements; shape/strides
// are the merged index dims, out_strides the output's matching dims) := weight row idx[r]. Element
// j of a row is at out_offset + ... + j * out_col_stride and w_offset + idx * w_row_stride +
// j * w_col_stride. An index outside [0, num_embeddings) (rejected on the host first) writes 0.
struct EmbeddingArgs {
  bm_i64 n_rows;  // index elements in this launch
  bm_i64 dim;     // embedding_dim
  bm_i64 idx_offset;
  bm_i64 out_offset;
  bm_i64 w_offset;
  bm_i64 w_row_stride;
  bm_i64 w_col_stride;
  bm_i64 out_col_stride;
  bm_i64 num_embeddings;
  bm_i32 ndim;
  bm_i32 pad_;
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 idx_strides[BM_MAX_DIMS];
  bm_i64 out_strides[BM_MAX_DIMS];
};

// nll_loss_<dtype>: for every target element t (shape = the target's merged dims), out = 0 when
// t == ignore_index, else -w[t] * input[in_pos + t * class_stride], where in_pos is the input
// element of class 0 at the target's position (in_strides: the input's strides without the class
// dim) and w[t] = weight[w_offset + t * w_stride] (1 without weight). Float math, rounded on store.
struct NllLossArgs {
  bm_i64 numel;
  bm_i64 out_offset;
  bm_i64 tgt_offset;
  bm_i64 in_offset;
  bm_i64 class_stride;
  bm_i64 n_classes;
  bm_i64 ignore_index;
  bm_i64 w_offset;
  bm_i64 w_stride;
  bm_i32 has_weight;
  bm_i32 ndim;
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 out_strides[BM_MAX_DIMS];
  bm_i64 tgt_strides[BM_MAX_DIMS];
  bm_i64 in_strides[BM_MAX_DIMS];
};

// conv2d_<dtype> (shaders/conv.metal): for each group grp, an implicit product of the weights
// (cout_g rows x k_total, k = (c, ky, kx)) and the unfolded input (k_total x cols, column
// (n, oy, ox) numbered row-major): out[n, grp * cout_g + o, oy, ox] = bias[...] + sum over k of
// weight[grp * cout_g + o, c, ky, kx] * input[n, grp * cin_g + c, oy * stride_h - pad_h + ky * dil_h,
// ox * stride_w - pad_w + kx * dil_w], input positions outside the image reading zero. Every
// operand has its own offset and (N, C, H, W)-order strides in elements.
struct Conv2dArgs {
  bm_i64 in_h;
  bm_i64 in_w;
  bm_i64 out_h;
  bm_i64 out_w;
  bm_i64 k_h;
  bm_i64 k_w;
  bm_i64 stride_h;
  bm_i64 stride_w;
  bm_i64 pad_h;
  bm_i64 pad_w;
  bm_i64 dil_h;
  bm_i64 dil_w;
  bm_i64 cin_g;    // input channels per group
  bm_i64 cout_g;   // output channels per group
  bm_i64 k_total;  // cin_g * k_h * k_w
  bm_i64 cols;     // batch * out_h * out_w
  bm_i64 in_offset;
  bm_i64 w_offset;
  bm_i64 bias_offset;
  bm_i64 out_offset;
  bm_i64 in_strides[4];
  bm_i64 w_strides[4];
  bm_i64 out_strides[4];
  bm_i64 bias_stride;
  bm_i32 has_bias;
  bm_i32 pad_;
};

// The argument structs of the gradient kernels, the fused optimizer steps and the indexing rows.
#include "kargs_training.h"
