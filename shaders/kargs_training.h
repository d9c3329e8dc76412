// Argument structs of the gradient kernels (conv / pool / softmax / norm / nll backward), the fused
// optimizer steps and the indexing rows, shared by the host (csrc/metal) and the shaders like the
// rest of kargs.h, which includes this file after its own types (bm_i64, BM_MAX_DIMS) are defined.
#pragma once

// ---- conv / pool backward ----

// conv2d_backward_input_<dtype> and conv2d_backward_weight_<dtype> (shaders/conv_backward.metal):
// per group, an implicit matrix product (rows x cols, reduction length k_total) with the forward's
// geometry (Conv2dArgs: in_* the convolution's input, out_* its output, i.e. grad_output):
//   input:  rows = cin_g, cols = batch * in_h * in_w, k = (o, ky, kx): k_total = cout_g * k_h * k_w;
//   weight: rows = cout_g, cols = cin_g * k_h * k_w, k = (n, oy, ox): k_total = batch * out_h * out_w.
// g_*: grad_output (N, O, OH, OW); a_*: the weight (input gradient) or the input (weight
// gradient); r_*: the result. Offsets and strides in elements.
struct Conv2dBackwardArgs {
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
  bm_i64 batch;
  bm_i64 cin_g;
  bm_i64 cout_g;
  bm_i64 rows;
  bm_i64 cols;
  bm_i64 k_total;
  bm_i64 g_offset;
  bm_i64 a_offset;
  bm_i64 r_offset;
  bm_i64 g_strides[4];
  bm_i64 a_strides[4];
  bm_i64 r_strides[4];
};

// max_pool2d_backward_<dtype>, avg_pool2d_backward_<dtype>, adaptive_avg_pool2d_backward_<dtype>
// (shaders/pool_backward.metal): one thread per element of the input gradient (N, C, H, W); g_*:
// grad_output (N, C, OH, OW), idx_*: the int64 indices (max only), out_*: the input gradient.
// max_pool2d_with_indices_<dtype> takes PoolArgs (in: the input, out: the int64 indices).
struct PoolBackwardArgs {
  bm_i64 n;  // input-gradient elements in this launch
  bm_i64 plane_base;
  bm_i64 C;
  bm_i64 H;
  bm_i64 W;
  bm_i64 OH;
  bm_i64 OW;
  bm_i64 g_offset;
  bm_i64 idx_offset;
  bm_i64 out_offset;
  bm_i64 g_strides[4];
  bm_i64 idx_strides[4];
  bm_i64 out_strides[4];
  bm_i32 ksize[2];
  bm_i32 stride[2];
  bm_i32 padding[2];
  bm_i32 dilation[2];
  bm_i32 count_include_pad;
  bm_i32 divisor;
};

// ---- backward kernels (h2) ----

// softmax_backward_* / log_softmax_backward_* along one dim of length len
// (shaders/softmax_backward.metal). Operands 0 grad, 1 the forward's output y, 2 the result; the
// other dims, merged over all three, number the rows. is_log: out = g - exp(y) * sum(g), else
// out = y * (g - sum(g * y)). Offsets and strides in elements.
struct SoftmaxBackwardArgs {
  bm_i64 n_rows;
  bm_i64 len;
  bm_i64 offset[3];
  bm_i64 stride[3];  // along the softmax dim
  bm_i32 ndim;
  bm_i32 is_log;
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 strides[3][BM_MAX_DIMS];
};

// layer_norm_backward_* (shaders/norm_backward.metal): operands 0 grad, 1 input, 2 grad_input.
// Rows (the leading dims) and a row's n_cols elements (the trailing dims, numbered row-major) as in
// LayerNormArgs, each merged over all three operands; the weight is dense over a row's numbering
// from w_offset. Offsets and strides in elements.
struct LayerNormBackwardArgs {
  bm_i64 n_rows;
  bm_i64 n_cols;
  bm_i64 offset[3];
  bm_i64 w_offset;
  bm_i32 row_ndim;
  bm_i32 col_ndim;
  bm_i64 row_shape[BM_MAX_DIMS];
  bm_i64 row_strides[3][BM_MAX_DIMS];
  bm_i64 col_shape[BM_MAX_DIMS];
  bm_i64 col_strides[3][BM_MAX_DIMS];
  float eps;
  bm_i32 has_weight;
};

// batch_norm_backward_* takes ElementwiseArgs: operands 0 out, 1 grad, 2 input, 3 the per-channel
// coefficients (float, 4 consecutive per channel: a, k, mean, c); flags = 1 in training:
// out = (grad * a + (x - mean) * k) + c, else out = grad * a.

// nll_loss_backward_*: one thread per element of the input's gradient, n_pos target positions x
// n_classes classes. A position's offsets come from shape (the target's dims, merged over the
// output without its class dim, grad and target); class c of it is at out + c * class_stride.
// Thread t is (t / n_classes, t % n_classes) when class_inner, else (t % n_pos, t / n_pos), so
// neighbouring threads write neighbouring memory. out = -w[t] * grad at class t (w[t] =
// weight[w_offset + t * w_stride], 1 without weight), 0 at other classes and ignored targets.
struct NllBackwardArgs {
  bm_i64 n_pos;
  bm_i64 n_classes;
  bm_i64 out_offset;
  bm_i64 g_offset;
  bm_i64 t_offset;
  bm_i64 class_stride;
  bm_i64 ignore_index;
  bm_i64 w_offset;
  bm_i64 w_stride;
  bm_i32 has_weight;
  bm_i32 class_inner;
  bm_i32 ndim;
  bm_i32 pad_;
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 out_strides[BM_MAX_DIMS];
  bm_i64 g_strides[BM_MAX_DIMS];
  bm_i64 t_strides[BM_MAX_DIMS];
};

// sgd_step_<dtype> / adam_step_<dtype> (shaders/optim.metal): operand 0 is the parameter, 1 the
// gradient, 2.. the state tensors (sgd: momentum_buffer; adam: exp_avg, exp_avg_sq,
// max_exp_avg_sq), all of `shape`; element k of operand j is at offset[j] + sum(i_d *
// strides[j][d]). flags: BM_OPTIM_* (shaders/optim_step.h); c: its BmOptimConsts<float>, c0..c6.
#define BM_OPTIM_OPERANDS 5
struct OptimArgs {
  bm_i64 numel;
  bm_i32 ndim;
  bm_i32 flags;
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 offset[BM_OPTIM_OPERANDS];
  bm_i64 strides[BM_OPTIM_OPERANDS][BM_MAX_DIMS];
  float c[8];
};

// ---- indexing (shaders/index.metal, csrc/metal/ops_index.cpp) ----
// A launch covers `shape` (ndim dims merged by the host). Element e has, for operand k, the
// offset offset[k] + sum(i_d * strides[k][d]). The row operands see the row dim with stride 0 (the
// kernel adds row * row_stride itself), and the last operand is the row number: stride 1 along
// the row dim, 0 elsewhere, offset 0.

// index_rows_<dtype>_<index dtype> (index_select, index_copy): operand 0 = dst, 1 = src, 2 = k.
// src row = smap[smap_offset + k * smap_stride]; dst row = has_dmap ? dmap[dmap_offset + k *
// dmap_stride] : k. A src row outside [0, src_rows) writes 0 and a dst row outside [0, dst_rows)
// is skipped (the host has rejected such indices; the guard only keeps memory safe).
struct IndexRowsArgs {
  bm_i64 numel;
  bm_i64 offset[3];
  bm_i64 strides[3][BM_MAX_DIMS];
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 src_row_stride;
  bm_i64 dst_row_stride;
  bm_i64 src_rows;
  bm_i64 dst_rows;
  bm_i64 smap_offset;
  bm_i64 smap_stride;
  bm_i64 dmap_offset;
  bm_i64 dmap_stride;
  bm_i32 ndim;
  bm_i32 has_dmap;
};

// index_add_<dtype>: operand 0 = out, 1 = base, 2 = src (row dim at stride 0), 3 = p (the row).
// out = base + sum over q in [csr[p], csr[p + 1]) of src row csr[rows + 1 + q], in q order,
// accumulated in float for half types (integers wrap, bool is or). csr indices from csr_offset.
struct IndexAddArgs {
  bm_i64 numel;
  bm_i64 offset[4];
  bm_i64 strides[4][BM_MAX_DIMS];
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 src_row_stride;
  bm_i64 rows;
  bm_i64 csr_offset;
  bm_i32 ndim;
  bm_i32 pad_;
};

// nonzero, three launches over chunks of `chunk` logical (row-major) elements of the input
// (shape/strides: its own dims, up to BM_MAX_DIMS, unmerged since they are the coordinates):
// nonzero_count_<dtype>: counts[c] = the nonzero elements of chunk c; nonzero_scan: one thread
// makes counts exclusive prefix sums; nonzero_write_<dtype>: chunk c writes its elements'
// coordinates as rows counts[c], counts[c] + 1, ... (below n_out) of out (int64).
struct NonzeroArgs {
  bm_i64 numel;
  bm_i64 chunk;
  bm_i64 n_chunks;
  bm_i64 in_offset;
  bm_i64 out_offset;
  bm_i64 out_row_stride;
  bm_i64 out_col_stride;
  bm_i64 n_out;
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 strides[BM_MAX_DIMS];
  bm_i32 ndim;
  bm_i32 pad_;
};
