// Registration entry points, one per kernel family file. backend.cpp calls each once.
#pragma once
#include "core/backend.h"

namespace bm::cpu {

void register_copy_kernels(Backend& b);       // copy (casts), fill, arange      - copy.cpp
void register_unary_kernels(Backend& b);      // neg exp ... clamp               - unary.cpp
void register_binary_kernels(Backend& b);     // add ... ge, where               - binary.cpp
void register_reduce_kernels(Backend& b);     // sum mean var amax amin           - reduce.cpp
void register_arg_reduce_kernels(Backend& b); // argmax argmin                   - reduce_arg.cpp
void register_softmax_kernels(Backend& b);    // softmax log_softmax             - softmax.cpp
void register_matmul_kernels(Backend& b);     // matmul (BLAS + strided fallback) - matmul.cpp
void register_random_kernels(Backend& b);     // uniform normal (Philox)         - random.cpp
void register_pool_kernels(Backend& b);       // max/avg/adaptive_avg_pool2d     - pool.cpp
void register_norm_kernels(Backend& b);       // layer_norm batch_norm           - norm.cpp
void register_nn_misc_kernels(Backend& b);    // dropout embedding nll_loss      - nn_misc.cpp
void register_conv_kernels(Backend& b);       // conv2d (im2col + BLAS, direct)  - conv.cpp
// conv / pool backward
void register_conv_backward_kernels(Backend& b);  // conv2d_backward_input/_weight  - conv_backward.cpp
void register_pool_backward_kernels(Backend& b);  // max_pool2d_with_indices, pool backward - pool_backward.cpp
// backward kernels (h2)
void register_softmax_backward_kernels(Backend& b);  // (log_)softmax_backward     - softmax_backward.cpp
void register_act_backward_kernels(Backend& b);      // gelu/gelu_tanh/silu_backward - act_backward.cpp
void register_norm_backward_kernels(Backend& b);     // layer/batch_norm_backward   - norm_backward.cpp
                                                     // (nll_loss_backward: nn_misc.cpp)
void register_optim_kernels(Backend& b);      // sgd_step adam_step              - optim.cpp
void register_index_kernels(Backend& b);      // index_select index_add index_copy nonzero - index.cpp
void register_scan_kernels(Backend& b);       // cumsum cumprod argsort          - scan.cpp
void register_unary_math_kernels(Backend& b);   // log1p ... erfinv, floor ... nan_to_num, isnan ... - unary_math.cpp
void register_binary_math_kernels(Backend& b);  // atan2 hypot fmod lerp, logical_*, bitwise_*   - binary_math.cpp

// Registers kernel K<T> for op under every dtype T in the op's row mask.
template <template <typename> class K>
void register_for_row(Backend& b, OpId op) {
  DTypeMask m = op_row(op).dtypes;
  for (int i = 0; i < kNumDTypes; ++i)
    if (m & (1u << i))  // the slot named by the type, not by i: GCC 13 saw a path with i = 10 (-Warray-bounds)
      visit_dtype(DType(i), [&](auto v) { b.set_kernel(op, dtype_of<decltype(v)>::value, &K<decltype(v)>::run); });
}

}  // namespace bm::cpu
