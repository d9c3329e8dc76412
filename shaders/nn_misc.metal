// dropout, embedding and nll_loss (the gather behind cross_entropy). Each mirrors the CPU kernel
// in csrc/cpu/nn_misc.cpp formula for formula, so both backends give the same bits.
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs.h"
#include "philox.h"
using namespace metal;

// ---- dropout: one thread per Philox block, as random.metal's fills ----
// The mask is a function of the element's logical index only, so it does not depend on how the
// input is laid out in memory or how the host split the launch.
template <typename T>
kernel void dropout(device const T* in [[buffer(0)]],
                    device T* out [[buffer(1)]],
                    constant DropoutArgs& args [[buffer(2)]],
                    uint gid [[thread_position_in_grid]]) {
  long block = args.index_base / 4 + long(gid);
  long end = args.index_base + args.numel;
  if (4 * block >= end) return;
  bm_philox_out r = bm_philox_block(args.seed, args.rng_offset + bm_u64(block));
  for (int lane = 0; lane < 4; ++lane) {
    long i = 4 * block + lane;
    if (i < args.index_base || i >= end) continue;
    long rest = i - args.index_base;
    long src = args.in_offset, dst = args.out_offset;
    for (int d = args.ndim - 1; d >= 0; --d) {
      long k = rest % args.shape[d];
      rest /= args.shape[d];
      src += k * args.in_strides[d];
      dst += k * args.out_strides[d];
    }
    // x * 0 for dropped elements (not 0): NaN and inf stay NaN, as torch's input * mask does.
    float m = bm_uniform_f32(r.v[lane]) >= args.p ? args.scale : 0.0f;
    out[dst] = T(float(in[src]) * m);
  }
}

#define BM_INSTANTIATE_DROPOUT(T, NAME, A) \
  template [[host_name("dropout_" #NAME)]] [[kernel]] decltype(dropout<T>) dropout<T>;
BM_DTYPES_FLOAT(BM_INSTANTIATE_DROPOUT, _)

// ---- embedding: one thread per output element ----
template <typename T, typename I>
kernel void embedding(device const I* idx [[buffer(0)]],
                      device const T* w [[buffer(1)]],
                      device T* out [[buffer(2)]],
                      constant EmbeddingArgs& args [[buffer(3)]],
                      uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.n_rows * args.dim) return;
  long row = long(gid) / args.dim, j = long(gid) % args.dim;
  long rest = row, src = args.idx_offset, dst = args.out_offset;
  for (int d = args.ndim - 1; d >= 0; --d) {
    long k = rest % args.shape[d];
    rest /= args.shape[d];
    src += k * args.idx_strides[d];
    dst += k * args.out_strides[d];
  }
  long r = long(idx[src]);
  // The host has rejected bad indices; this guard only keeps a bad one from reading out of bounds.
  T v = T(0);
  if (r >= 0 && r < args.num_embeddings) v = w[args.w_offset + r * args.w_row_stride + j * args.w_col_stride];
  out[dst + j * args.out_col_stride] = v;
}

#define BM_INSTANTIATE_EMBEDDING(T, NAME)                                                           \
  template [[host_name("embedding_" #NAME "_int32")]] [[kernel]] decltype(embedding<T, int>)        \
      embedding<T, int>;                                                                             \
  template [[host_name("embedding_" #NAME "_int64")]] [[kernel]] decltype(embedding<T, long>)       \
      embedding<T, long>;
BM_FOR_EACH_DTYPE(BM_INSTANTIATE_EMBEDDING)

// ---- nll_loss: one thread per target element ----
template <typename T>
kernel void nll_loss(device const T* in [[buffer(0)]],
                     device const long* tgt [[buffer(1)]],
                     device const T* w [[buffer(2)]],
                     device T* out [[buffer(3)]],
                     constant NllLossArgs& args [[buffer(4)]],
                     uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  long rest = gid;
  long o = args.out_offset, t = args.tgt_offset, x = args.in_offset;
  for (int d = args.ndim - 1; d >= 0; --d) {
    long k = rest % args.shape[d];
    rest /= args.shape[d];
    o += k * args.out_strides[d];
    t += k * args.tgt_strides[d];
    x += k * args.in_strides[d];
  }
  long c = tgt[t];
  float v = 0.0f;  // ignored (and, defensively, out-of-range) targets contribute nothing
  if (c != args.ignore_index && c >= 0 && c < args.n_classes) {
    float wt = args.has_weight ? float(w[args.w_offset + c * args.w_stride]) : 1.0f;
    v = -(wt * float(in[x + c * args.class_stride]));
  }
  out[o] = T(v);
}

#define BM_INSTANTIATE_NLL(T, NAME, A) \
  template [[host_name("nll_loss_" #NAME)]] [[kernel]] decltype(nll_loss<T>) nll_loss<T>;
BM_DTYPES_FLOAT(BM_INSTANTIATE_NLL, _)

// ---- nll_loss_backward: one thread per element of the input's gradient (a gather: each element
// is written once, by its own thread, from its position's target) ----
template <typename T>
kernel void nll_loss_backward(device const T* g [[buffer(0)]],
                              device const long* tgt [[buffer(1)]],
                              device const T* w [[buffer(2)]],
                              device T* out [[buffer(3)]],
                              constant NllBackwardArgs& args [[buffer(4)]],
                              uint gid [[thread_position_in_grid]]) {
  const long i = long(gid);
  if (i >= args.n_pos * args.n_classes) return;
  const long pos = args.class_inner ? i / args.n_classes : i % args.n_pos;
  const long c = args.class_inner ? i % args.n_classes : i / args.n_pos;
  long rest = pos;
  long o = args.out_offset, gg = args.g_offset, t = args.t_offset;
  for (int d = args.ndim - 1; d >= 0; --d) {
    long k = rest % args.shape[d];
    rest /= args.shape[d];
    o += k * args.out_strides[d];
    gg += k * args.g_strides[d];
    t += k * args.t_strides[d];
  }
  const long tc = tgt[t];
  float v = 0.0f;
  if (tc == c && tc != args.ignore_index) {
    float wt = args.has_weight ? float(w[args.w_offset + tc * args.w_stride]) : 1.0f;
    v = -(wt * float(g[gg]));
  }
  out[o + c * args.class_stride] = T(v);
}

#define BM_INSTANTIATE_NLL_BACKWARD(T, NAME, A) \
  template [[host_name("nll_loss_backward_" #NAME)]] [[kernel]] decltype(nll_loss_backward<T>) nll_loss_backward<T>;
BM_DTYPES_FLOAT(BM_INSTANTIATE_NLL_BACKWARD, _)
