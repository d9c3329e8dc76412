// sgd_step and adam_step: one thread per parameter element, updating the parameter and its state
// in place with the formulas of optim_step.h (shared with csrc/cpu/optim.cpp, so both backends
// give the same bits). Half-type tensors compute in float and round once on store.
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs.h"
#include "optim_step.h"
using namespace metal;

// Element offsets of operands 0..n-1 for the gid-th element (row-major over args.shape).
inline void bm_optim_offsets(constant OptimArgs& args, long gid, int n, thread long* off) {
  for (int j = 0; j < n; ++j) off[j] = args.offset[j];
  long rest = gid;
  for (int d = args.ndim - 1; d >= 0; --d) {
    long k = rest % args.shape[d];
    rest /= args.shape[d];
    for (int j = 0; j < n; ++j) off[j] += k * args.strides[j][d];
  }
}

inline BmOptimConsts<float> bm_optim_consts(constant OptimArgs& args) {
  BmOptimConsts<float> k;
  k.c0 = args.c[0];
  k.c1 = args.c[1];
  k.c2 = args.c[2];
  k.c3 = args.c[3];
  k.c4 = args.c[4];
  k.c5 = args.c[5];
  k.c6 = args.c[6];
  return k;
}

// buf: the momentum buffer; without momentum the host binds the parameter here and it is not used.
template <typename T>
kernel void sgd_step(device T* param [[buffer(0)]],
                     device const T* grad [[buffer(1)]],
                     device T* buf [[buffer(2)]],
                     constant OptimArgs& args [[buffer(3)]],
                     uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  long off[3];
  bm_optim_offsets(args, long(gid), 3, off);
  const bool has_buf = (args.flags & BM_OPTIM_MOMENTUM) != 0;
  float b = has_buf ? float(buf[off[2]]) : 0.0f;
  BmSgdResult<float> r = bm_sgd_element<float>(float(param[off[0]]), float(grad[off[1]]), b,
                                               bm_optim_consts(args), args.flags);
  param[off[0]] = T(r.param);
  if (has_buf) buf[off[2]] = T(r.buf);
}

// vmax: max_exp_avg_sq with amsgrad; otherwise the host binds the parameter here, unused.
template <typename T>
kernel void adam_step(device T* param [[buffer(0)]],
                      device const T* grad [[buffer(1)]],
                      device T* exp_avg [[buffer(2)]],
                      device T* exp_avg_sq [[buffer(3)]],
                      device T* vmax [[buffer(4)]],
                      constant OptimArgs& args [[buffer(5)]],
                      uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= args.numel) return;
  long off[5];
  bm_optim_offsets(args, long(gid), 5, off);
  const bool ams = (args.flags & BM_OPTIM_AMSGRAD) != 0;
  float mx = ams ? float(vmax[off[4]]) : 0.0f;
  BmAdamResult<float> r = bm_adam_element<float>(float(param[off[0]]), float(grad[off[1]]), float(exp_avg[off[2]]),
                                                 float(exp_avg_sq[off[3]]), mx, bm_optim_consts(args), args.flags);
  param[off[0]] = T(r.param);
  exp_avg[off[2]] = T(r.exp_avg);
  exp_avg_sq[off[3]] = T(r.exp_avg_sq);
  if (ams) vmax[off[4]] = T(r.max_exp_avg_sq);
}

#define BM_INSTANTIATE_OPTIM(T, NAME, A)                                                          \
  template [[host_name("sgd_step_" #NAME)]] [[kernel]] decltype(sgd_step<T>) sgd_step<T>;       \
  template [[host_name("adam_step_" #NAME)]] [[kernel]] decltype(adam_step<T>) adam_step<T>;
BM_DTYPES_FLOAT(BM_INSTANTIATE_OPTIM, _)
