// max_pool2d, avg_pool2d, adaptive_avg_pool2d on Metal (shaders/pool.metal), max_pool2d_with_indices
// and the pooling gradients (shaders/pool_backward.metal): one thread per output element, the
// inputs read through their strides. The kernels see a 4-D input and output (core/
// ops_nn_pool.cpp checked the arguments); launches are split by planes so thread ids fit in 32 bits.
#include <algorithm>
#include <string>
#include <vector>

#include "core/errors.h"
#include "metal/kernels.h"

namespace bm::metal {

namespace {

// Threads per launch at most: grid positions are 32-bit in the shaders.
constexpr int64_t kMaxThreads = int64_t(1) << 31;

// The window (kernel, stride, padding, dilation) and the averaging options of PoolArgs and
// PoolBackwardArgs, from the op's arguments.
template <typename Args>
void set_window(const OpArgs& o, Args* a) {
  for (int d = 0; d < 2; ++d) {
    a->ksize[d] = int32_t(o.pool_kernel[d]);
    a->stride[d] = int32_t(o.pool_stride[d]);
    a->padding[d] = int32_t(o.pool_padding[d]);
    a->dilation[d] = int32_t(o.pool_dilation[d]);
  }
  a->count_include_pad = o.pool_count_include_pad;
  a->divisor = int32_t(o.pool_divisor);
}

// One thread per element of `planes` planes of per_plane elements, in as few launches of at most
// kMaxThreads threads as whole planes allow: launch(first plane, threads). `what` names the plane
// (input or output) in the error for a plane that no launch can hold.
template <typename F>
void for_each_launch(const char* op, const char* what, int64_t planes, int64_t per_plane, F&& launch) {
  if (per_plane > kMaxThreads)
    throw ValueError(std::string("[") + op + "] an " + what + " plane of " + std::to_string(per_plane) +
                     " elements is more than one Metal launch can address");
  const int64_t step = kMaxThreads / per_plane;
  for (int64_t p0 = 0; p0 < planes; p0 += step) launch(p0, std::min(step, planes - p0) * per_plane);
}

void pool_kernel(const KernelCall& c, const char* base) {
  const Tensor& in = *c.in[0];
  const Tensor& out = *c.out;
  const OpArgs& o = *c.args;
  MetalBackend& be = backend_of(out);
  PoolArgs a{};
  a.C = in.shape[1], a.H = in.shape[2], a.W = in.shape[3], a.OH = out.shape[2], a.OW = out.shape[3];
  a.in_offset = in.offset, a.out_offset = out.offset;
  for (int d = 0; d < 4; ++d) a.in_strides[d] = in.strides[d], a.out_strides[d] = out.strides[d];
  set_window(o, &a);
  for_each_launch(base, "output", in.shape[0] * in.shape[1], a.OH * a.OW, [&](int64_t p0, int64_t n) {
    a.plane_base = p0;
    a.n_out = n;
    be.dispatch(kernel_name(base, in.dtype), {{&in, 0}, {&out, 1}}, &a, sizeof(a), 2,
                Size3{uint64_t(a.n_out), 1, 1}, group_1d(a.n_out));
  });
}

// One thread per input-gradient element (shaders/pool_backward.metal): in[0] = grad_output
// (N, C, OH, OW), in[1] = the int64 indices (max only), out = the gradient (N, C, H, W).
void pool_backward_kernel(const KernelCall& c, const char* base) {
  const Tensor& g = *c.in[0];
  const Tensor* idx = c.nin > 1 ? c.in[1] : nullptr;
  const Tensor& out = *c.out;
  const OpArgs& o = *c.args;
  MetalBackend& be = backend_of(out);
  PoolBackwardArgs a{};
  a.C = out.shape[1], a.H = out.shape[2], a.W = out.shape[3], a.OH = g.shape[2], a.OW = g.shape[3];
  a.g_offset = g.offset, a.out_offset = out.offset, a.idx_offset = idx ? idx->offset : 0;
  for (int d = 0; d < 4; ++d) {
    a.g_strides[d] = g.strides[d];
    a.out_strides[d] = out.strides[d];
    a.idx_strides[d] = idx ? idx->strides[d] : 0;
  }
  set_window(o, &a);
  for_each_launch(base, "input", out.shape[0] * out.shape[1], a.H * a.W, [&](int64_t p0, int64_t n) {
    a.plane_base = p0;
    a.n = n;
    std::vector<MetalBackend::Binding> bufs{{&g, 0}};
    if (idx) bufs.push_back({idx, 1});
    bufs.push_back({&out, uint32_t(idx ? 2 : 1)});
    be.dispatch(kernel_name(base, out.dtype), bufs, &a, sizeof(a), idx ? 3 : 2, Size3{uint64_t(a.n), 1, 1},
                group_1d(a.n));
  });
}

void max_pool_kernel(const KernelCall& c) { pool_kernel(c, "max_pool2d"); }
void max_pool_indices_kernel(const KernelCall& c) { pool_kernel(c, "max_pool2d_with_indices"); }
void max_pool_backward_kernel(const KernelCall& c) { pool_backward_kernel(c, "max_pool2d_backward"); }
void avg_pool_backward_kernel(const KernelCall& c) { pool_backward_kernel(c, "avg_pool2d_backward"); }
void adaptive_avg_pool_backward_kernel(const KernelCall& c) { pool_backward_kernel(c, "adaptive_avg_pool2d_backward"); }
void avg_pool_kernel(const KernelCall& c) { pool_kernel(c, "avg_pool2d"); }
void adaptive_avg_pool_kernel(const KernelCall& c) { pool_kernel(c, "adaptive_avg_pool2d"); }

}  // namespace

void register_pool_kernels(MetalBackend& b) {
  const std::pair<OpId, Kernel> ops[] = {{OpId::max_pool2d, &max_pool_kernel},
                                         {OpId::avg_pool2d, &avg_pool_kernel},
                                         {OpId::adaptive_avg_pool2d, &adaptive_avg_pool_kernel},
                                         {OpId::max_pool2d_with_indices, &max_pool_indices_kernel},
                                         {OpId::max_pool2d_backward, &max_pool_backward_kernel},
                                         {OpId::avg_pool2d_backward, &avg_pool_backward_kernel},
                                         {OpId::adaptive_avg_pool2d_backward, &adaptive_avg_pool_backward_kernel}};
  for (const auto& [op, k] : ops)
    for (int i = 0; i < kNumDTypes; ++i)
      if (DType(i) != DType::Float64 && (op_row(op).dtypes & bit(DType(i)))) b.set_kernel(op, DType(i), k);
}

}  // namespace bm::metal
