// Registration entry points of the Metal backend, one per kernel family file, plus the host-side
// helpers every family shares: kernel names per dtype and strided layouts packed for shaders.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/op_registry.h"
#include "metal/backend.h"

extern "C++" {
#include "kargs.h"
}

namespace bm::metal {

void register_copy_kernels(MetalBackend& b);         // copy (casts), fill, arange     - ops_copy.cpp
// The elementwise launch (ops_elementwise.cpp), shared by ops_math.cpp: the operands (cast and
// broadcast by the dispatcher) merged into layouts; "<op>_1d_<dt>" (BM_EW_PER_THREAD elements a
// thread when long, shaders/elementwise.h) for a layout of at most one dim, "<op>_strided_<dt>"
// otherwise. Inputs at buffers 0..nin-1, the output at nin, the arguments at nin+1.
void launch_elementwise(OpId op, DType dt, const KernelCall& c, const ElementwiseArgs& params);
// Runs `<base>_<dtype>` (pow_check_negative, divisor_check_zero) over e's elements and waits:
// whether any element was flagged.
bool any_flagged(const char* base, const Tensor& e);
void register_elementwise_kernels(MetalBackend& b);  // unary, binary, where, clamp    - ops_elementwise.cpp
void register_reduce_kernels(MetalBackend& b);       // reductions, softmax            - ops_reduce.cpp
void register_matmul_kernels(MetalBackend& b);       // matmul                         - ops_matmul.cpp
void register_random_kernels(MetalBackend& b);       // uniform, normal                - ops_random.cpp
void register_pool_kernels(MetalBackend& b);         // pools, pool gradients, max_pool2d_with_indices - ops_pool.cpp
void register_norm_kernels(MetalBackend& b);         // layer_norm, batch_norm         - ops_norm.cpp
void register_nn_misc_kernels(MetalBackend& b);      // dropout, embedding, nll_loss   - ops_nn_misc.cpp
void register_conv_kernels(MetalBackend& b);         // conv2d and its gradients     - ops_conv.cpp
// backward kernels (h2); gelu/gelu_tanh/silu_backward: ops_elementwise.cpp, nll_loss_backward: ops_nn_misc.cpp
void register_softmax_backward_kernels(MetalBackend& b);  // (log_)softmax_backward - ops_softmax_backward.cpp
void register_norm_backward_kernels(MetalBackend& b);     // layer/batch_norm_backward - ops_norm_backward.cpp
void register_conv_kernels(MetalBackend& b);         // conv2d                         - ops_conv.cpp
void register_optim_kernels(MetalBackend& b);        // sgd_step, adam_step            - ops_optim.cpp
void register_index_kernels(MetalBackend& b);        // index_select/add/copy, nonzero - ops_index.cpp
void register_scan_kernels(MetalBackend& b);         // cumsum, cumprod, argsort       - ops_scan.cpp
void register_math_kernels(MetalBackend& b);         // log1p ... erfinv, floor ... round, isnan, logical_*,
                                                     // bitwise_*, atan2 hypot fmod lerp - ops_math.cpp

// "<base>_<dtype name>", the host names shaders instantiate from BM_FOR_EACH_DTYPE.
inline std::string kernel_name(const std::string& base, DType d) { return base + "_" + dtype_name(d); }

// Same-shape tensors merged into at most BM_MAX_DIMS dims (dims contiguous in every tensor are
// merged, size-1 dims dropped). Offsets and strides in elements of each tensor.
struct Layout {
  int ndim = 0;
  int64_t numel = 1;
  int64_t shape[BM_MAX_DIMS] = {};
  std::vector<int64_t> offset;                       // per tensor
  std::vector<std::array<int64_t, BM_MAX_DIMS>> strides;  // per tensor
};

// Calls fn once per launchable layout of `ts` (same shapes): usually once; tensors with more than
// BM_MAX_DIMS dims that cannot be merged are split along their outer dims, one launch per slice.
void for_each_layout(const std::vector<const Tensor*>& ts, const std::function<void(const Layout&)>& fn);

// Layout fields of a shader argument struct (numel, ndim, shape, offset[k], strides[k]): operand k
// is the k-th tensor given to for_each_layout.
template <typename Args>
void set_layout(const Layout& L, Args* a) {
  a->numel = L.numel;
  a->ndim = L.ndim;
  for (int d = 0; d < L.ndim; ++d) a->shape[d] = L.shape[d];
  for (size_t k = 0; k < L.offset.size(); ++k) {
    a->offset[k] = L.offset[k];
    for (int d = 0; d < L.ndim; ++d) a->strides[k][d] = L.strides[k][d];
  }
}

// Threadgroup size for a 1-D launch over n threads.
inline Size3 group_1d(int64_t n) { return Size3{uint64_t(n < 256 ? (n > 0 ? n : 1) : 256), 1, 1}; }

}  // namespace bm::metal
