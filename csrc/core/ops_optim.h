// Fused optimizer steps: torch.optim.SGD's and Adam/AdamW's update of one parameter, in place, in
// one pass over its elements (registry rows sgd_step and adam_step; formulas in
// shaders/optim_step.h, shared by the CPU kernels and the shaders). Checks run in the project's
// order: devices, then dtypes, then shapes, then overlapping outputs; only then is anything
// written. Nothing waits for the device: the launch is queued like any op.
#pragma once
#include "core/ops.h"
#include "optim_step.h"  // shaders/optim_step.h

namespace bm {

// One SGD step of torch's single-tensor implementation on `param` (any strides; float dtypes, the
// half types compute in float32), reading `grad` (same shape and dtype, any strides, broadcast
// allowed). momentum != 0: momentum_buffer is updated in place; when it is null (the first step)
// a new buffer is made from this step's gradient, as torch does. Returns the momentum buffer (null
// when momentum == 0).
TensorPtr sgd_step_(const TensorPtr& param, const TensorPtr& grad, const TensorPtr& momentum_buffer, double lr,
                    double momentum, double dampening, double weight_decay, bool nesterov, bool maximize);

// One Adam (decoupled_weight_decay=false) or AdamW (true) step of torch's single-tensor,
// non-capturable implementation on `param`, updating exp_avg, exp_avg_sq and, with amsgrad,
// max_exp_avg_sq in place. `step` is torch's state['step']: a 0-d float32 (or float64) tensor on
// the cpu, incremented in place here (step_t += 1); its new value t gives the bias corrections
// 1 - beta1^t and sqrt(1 - beta2^t), computed in double on the host as torch's Python code does.
void adam_step_(const TensorPtr& param, const TensorPtr& grad, const TensorPtr& exp_avg, const TensorPtr& exp_avg_sq,
                const TensorPtr& max_exp_avg_sq, const TensorPtr& step, double lr, double beta1, double beta2,
                double eps, double weight_decay, bool amsgrad, bool maximize, bool decoupled_weight_decay);

// The kernels' view of OpArgs::optim: hyperparameters rounded to the compute type A (float, or
// double for float64) and the BM_OPTIM_* flags. Shared by the CPU kernels and the Metal host code.
template <typename A>
inline BmOptimConsts<A> sgd_consts(const OpArgs::Optim& o) {
  return {A(o.weight_decay), A(o.momentum), A(1 - o.dampening), A(-o.lr), A(0), A(0), A(0)};
}
inline int sgd_flags(const OpArgs::Optim& o) {
  return (o.maximize ? BM_OPTIM_MAXIMIZE : 0) | (o.weight_decay != 0 ? BM_OPTIM_WEIGHT_DECAY : 0) |
         (o.momentum != 0 ? BM_OPTIM_MOMENTUM : 0) | (o.nesterov ? BM_OPTIM_NESTEROV : 0) |
         (o.first_step ? BM_OPTIM_FIRST_STEP : 0);
}
template <typename A>
inline BmOptimConsts<A> adam_consts(const OpArgs::Optim& o) {
  const A wd = o.decoupled_weight_decay ? A(1 - o.lr * o.weight_decay) : A(o.weight_decay);
  return {wd, A(1 - o.beta1), A(o.beta2), A(1 - o.beta2), A(o.bias_correction2_sqrt), A(o.eps), A(-o.step_size)};
}
template <typename A>
inline int adam_flags(const OpArgs::Optim& o) {
  const A w = A(1 - o.beta1);  // torch's lerp picks its formula by the weight in the tensor's type
  return (o.maximize ? BM_OPTIM_MAXIMIZE : 0) | (o.weight_decay != 0 ? BM_OPTIM_WEIGHT_DECAY : 0) |
         (o.amsgrad ? BM_OPTIM_AMSGRAD : 0) | (o.decoupled_weight_decay ? BM_OPTIM_DECOUPLED : 0) |
         ((w < A(0.5) && w > A(-0.5)) ? BM_OPTIM_LERP_SMALL : 0);
}

}  // namespace bm
