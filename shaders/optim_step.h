// One element of the fused optimizer steps (sgd_step, adam_step), written once in the subset of
// C++ that is also MSL and included by shaders/optim.metal and csrc/cpu/optim.cpp: the CPU and
// the simulator compute the same bits. A is the compute type (float; double on the CPU for
// float64); half-type parameters compute in float and round once on store.
//
// The formulas follow torch's single-tensor (for-loop) SGD and Adam op by op, rounding where
// torch rounds and fusing where torch's CPU kernels fuse (measured against torch 2.13 on AVX2):
//   t.add(o, alpha=a) -> fma(o, a, t)      t.lerp_(e, w) -> fma(w, e - t, t)  (|w| < 0.5)
//   t.addcmul_(x, y, value=s) -> fma(s * x, y, t)   t.addcdiv_(x, y, value=s) -> t + (s * x) / y
// The hyperparameters arrive already rounded to A by the host, as torch rounds Python scalars
// to the tensor's compute type. Multiply-adds not written as BM_OPTIM_FMA must not be contracted
// (the CPU file is compiled with -ffp-contract=off).
#ifndef BESSEMER_OPTIM_STEP_H
#define BESSEMER_OPTIM_STEP_H

#ifdef __METAL_VERSION__
#define BM_OPTIM_FMA(a, b, c) metal::fma(a, b, c)
#define BM_OPTIM_SQRT(x) metal::precise::sqrt(x)
#else
#include <cmath>
#define BM_OPTIM_FMA(a, b, c) std::fma(a, b, c)
#define BM_OPTIM_SQRT(x) std::sqrt(x)
#endif

// OptimArgs::flags
#define BM_OPTIM_MAXIMIZE 1
#define BM_OPTIM_WEIGHT_DECAY 2    // weight_decay != 0
#define BM_OPTIM_MOMENTUM 4        // sgd: momentum != 0
#define BM_OPTIM_NESTEROV 8        // sgd
#define BM_OPTIM_FIRST_STEP 16     // sgd: the momentum buffer is created from this gradient
#define BM_OPTIM_AMSGRAD 32        // adam
#define BM_OPTIM_DECOUPLED 64      // adam: AdamW's decoupled weight decay
#define BM_OPTIM_LERP_SMALL 128    // adam: |1 - beta1| < 0.5 (torch's lerp picks its formula by it)

// Hyperparameters in the compute type. sgd: c0 = weight_decay, c1 = momentum,
// c2 = 1 - dampening, c3 = -lr. adam: c0 = weight_decay (Adam) or 1 - lr * weight_decay
// (AdamW), c1 = 1 - beta1, c2 = beta2, c3 = 1 - beta2, c4 = sqrt(1 - beta2^t), c5 = eps,
// c6 = -lr / (1 - beta1^t).
template <typename A>
struct BmOptimConsts {
  A c0, c1, c2, c3, c4, c5, c6;
};

template <typename A>
struct BmSgdResult {
  A param, buf;
};

// torch's _single_tensor_sgd for one element: buf is the momentum buffer (ignored without momentum).
template <typename A>
inline BmSgdResult<A> bm_sgd_element(A p, A g, A buf, BmOptimConsts<A> k, int flags) {
  if (flags & BM_OPTIM_MAXIMIZE) g = -g;
  if (flags & BM_OPTIM_WEIGHT_DECAY) g = BM_OPTIM_FMA(p, k.c0, g);  // grad.add(param, alpha=wd)
  if (flags & BM_OPTIM_MOMENTUM) {
    if (flags & BM_OPTIM_FIRST_STEP) {
      buf = g;  // grad.clone()
    } else {
      const A decayed = buf * k.c1;          // buf.mul_(momentum)
      buf = BM_OPTIM_FMA(g, k.c2, decayed);  // .add_(grad, alpha=1 - dampening)
    }
    g = (flags & BM_OPTIM_NESTEROV) ? BM_OPTIM_FMA(buf, k.c1, g) : buf;  // grad.add(buf, alpha=momentum)
  }
  BmSgdResult<A> r;
  r.param = BM_OPTIM_FMA(g, k.c3, p);  // param.add_(grad, alpha=-lr)
  r.buf = buf;
  return r;
}

template <typename A>
struct BmAdamResult {
  A param, exp_avg, exp_avg_sq, max_exp_avg_sq;
};

// NaN-propagating max, as torch.maximum.
template <typename A>
inline A bm_optim_max(A a, A b) {
  return (a != a || a > b) ? a : b;
}

// torch's _single_tensor_adam (non-capturable) for one element; vmax is ignored without amsgrad.
template <typename A>
inline BmAdamResult<A> bm_adam_element(A p, A g, A m, A v, A vmax, BmOptimConsts<A> k, int flags) {
  if (flags & BM_OPTIM_MAXIMIZE) g = -g;
  if (flags & BM_OPTIM_WEIGHT_DECAY) {
    if (flags & BM_OPTIM_DECOUPLED) p = p * k.c0;  // param.mul_(1 - lr * weight_decay)
    else g = BM_OPTIM_FMA(p, k.c0, g);             // grad.add(param, alpha=weight_decay)
  }
  // exp_avg.lerp_(grad, 1 - beta1): fma(w, end - self, self), or fma(w - 1, end - self, end)
  const A diff = g - m;
  m = (flags & BM_OPTIM_LERP_SMALL) ? BM_OPTIM_FMA(k.c1, diff, m) : BM_OPTIM_FMA(k.c1 - A(1), diff, g);
  // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
  const A decayed = v * k.c2;
  v = BM_OPTIM_FMA(k.c3 * g, g, decayed);
  A second = v;
  if (flags & BM_OPTIM_AMSGRAD) {
    vmax = bm_optim_max(vmax, v);  // torch.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
    second = vmax;
  }
  // denom = (second.sqrt() / bias_correction2_sqrt).add_(eps)
  const A denom = BM_OPTIM_SQRT(second) / k.c4 + k.c5;
  // param.addcdiv_(exp_avg, denom, value=-step_size)
  const A step = (k.c6 * m) / denom;
  BmAdamResult<A> r;
  r.param = p + step;
  r.exp_avg = m;
  r.exp_avg_sq = v;
  r.max_exp_avg_sq = vmax;
  return r;
}

#endif
