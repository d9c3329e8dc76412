// sgd_step and adam_step on Metal (shaders/optim.metal), any strides: the parameter, gradient and
// state tensors are merged into launch layouts and each layout is one launch.
#include <string>

#include "core/ops_optim.h"
#include "metal/kernels.h"

namespace bm::metal {

namespace {

// One launch per layout of `ts` (ts[0] the parameter): operand j is bound at buffer j, the
// argument struct after them.
void launch(const std::string& name, const std::vector<const Tensor*>& ts, int flags, const BmOptimConsts<float>& k) {
  MetalBackend& be = backend_of(*ts[0]);
  std::vector<MetalBackend::Binding> bindings;
  for (size_t j = 0; j < ts.size(); ++j) bindings.push_back({ts[j], uint32_t(j)});
  const float c[8] = {k.c0, k.c1, k.c2, k.c3, k.c4, k.c5, k.c6, 0.0f};
  for_each_layout(ts, [&](const Layout& L) {
    OptimArgs a{};
    a.numel = L.numel;
    a.ndim = L.ndim;
    a.flags = flags;
    for (int d = 0; d < L.ndim; ++d) a.shape[d] = L.shape[d];
    for (size_t j = 0; j < ts.size(); ++j) {
      a.offset[j] = L.offset[j];
      for (int d = 0; d < L.ndim; ++d) a.strides[j][d] = L.strides[j][d];
    }
    for (int i = 0; i < 8; ++i) a.c[i] = c[i];
    be.dispatch(name, bindings, &a, sizeof(a), uint32_t(ts.size()), Size3{uint64_t(L.numel), 1, 1},
                group_1d(L.numel));
  });
}

// out = param; in: grad[, momentum_buffer]. Without a buffer the parameter fills its slot.
void sgd_step_kernel(const KernelCall& c) {
  const Tensor* buf = c.nin > 1 ? c.in[1] : c.out;
  launch(kernel_name("sgd_step", c.out->dtype), {c.out, c.in[0], buf}, sgd_flags(c.args->optim),
         sgd_consts<float>(c.args->optim));
}

// out = param; in: grad, exp_avg, exp_avg_sq[, max_exp_avg_sq].
void adam_step_kernel(const KernelCall& c) {
  const Tensor* vmax = c.nin > 3 ? c.in[3] : c.out;
  launch(kernel_name("adam_step", c.out->dtype), {c.out, c.in[0], c.in[1], c.in[2], vmax},
         adam_flags<float>(c.args->optim), adam_consts<float>(c.args->optim));
}

}  // namespace

void register_optim_kernels(MetalBackend& b) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType d = DType(i);
    if (d == DType::Float64) continue;  // Metal has no double
    if (op_row(OpId::sgd_step).dtypes & bit(d)) b.set_kernel(OpId::sgd_step, d, &sgd_step_kernel);
    if (op_row(OpId::adam_step).dtypes & bit(d)) b.set_kernel(OpId::adam_step, d, &adam_step_kernel);
  }
}

}  // namespace bm::metal
