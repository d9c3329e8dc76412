// Backward kernels of the normalisations (the op layer, core/ops_nn_norm_backward.cpp, checks and
// prepares the inputs; shaders/norm_backward.metal computes the same formulas):
//   layer_norm_backward  per row of the trailing norm_ndim dims: mean and rstd recomputed as the
//                        forward computes them (norm.cpp), then with gw = grad [* w] and
//                        xhat = (x - mean) * rstd, m1 = mean(gw), m2 = mean(gw * xhat):
//                        grad_input = (gw - (xhat * m2 + m1)) * rstd. acc_t<T> (float for the
//                        half types) throughout; grad, input and output rows may have any strides.
//   batch_norm_backward  out = (grad * a + (x - mean) * k) + c per element (training), grad * a
//                        (evaluation), with per-channel coefficients [a, k, mean, c] (acc_t<T>)
//                        arriving as a zero-stride view of x's shape.
#include <cmath>
#include <vector>

#include "cpu/elementwise.h"
#include "cpu/kernels.h"
#include "cpu/norm_f32.h"
#include "cpu/norm_rows.h"

namespace bm::cpu {

namespace {

template <typename T>
void layer_norm_backward_impl(const KernelCall& c) {
  using A = acc_t<T>;
  const Tensor& g = *c.in[0];
  const Tensor& x = *c.in[1];
  const Tensor& out = *c.out;
  const OpArgs& args = *c.args;
  const size_t k = size_t(args.norm_ndim);
  const DimRun g_rows = row_dims(g, k), g_cols = col_dims(g, k);
  const DimRun x_rows = row_dims(x, k), x_cols = col_dims(x, k);
  const DimRun o_rows = row_dims(out, k), o_cols = col_dims(out, k);
  const int64_t rows = x_rows.numel(), n = x_cols.numel();
  const T* w = args.norm_weight ? c.in[2]->data<T>() : nullptr;  // dense over the row, in T
  const A eps = A(args.norm_eps), inv_n = A(1) / A(n);
  const T* gb = g.data<T>();
  const T* xb = x.data<T>();
  T* ob = out.data<T>();

  parallel_for(0, rows, row_grain(n), [&](int64_t r0, int64_t r1) {
    std::vector<A> xv(static_cast<size_t>(n)), gv(static_cast<size_t>(n));
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = xb + offset_of(x_rows, r);
      const T* gr = gb + offset_of(g_rows, r);
      T* orow = ob + offset_of(o_rows, r);
      for_each_offset(x_cols, [&](int64_t j, int64_t off) { xv[size_t(j)] = A(xr[off]); });
      for_each_offset(g_cols, [&](int64_t j, int64_t off) { gv[size_t(j)] = A(gr[off]); });
      const A* v = xv.data();
      A mean, rstd;
      row_stats(v, n, eps, mean, rstd);  // the forward's statistics, to the bit
      if (w)
        for (int64_t j = 0; j < n; ++j) gv[size_t(j)] = gv[size_t(j)] * A(w[j]);
      A* gw = gv.data();
      A* xh = xv.data();
      for (int64_t j = 0; j < n; ++j) xh[j] = (xh[j] - mean) * rstd;
      const A m1 = blocked_sum<A>(n, [gw](int64_t j) { return gw[j]; }) * inv_n;
      const A m2 = blocked_sum<A>(n, [gw, xh](int64_t j) { return gw[j] * xh[j]; }) * inv_n;
      for_each_offset(o_cols, [&](int64_t j, int64_t off) { orow[off] = T((gw[j] - (xh[j] * m2 + m1)) * rstd); });
    }
  });
}

template <typename T>
struct LayerNormBackwardKernel {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(OpId::layer_norm_backward)) layer_norm_backward_impl<T>(c);
    else no_kernel("layer_norm_backward");
  }
};

// Operands out, grad, x (T) and coef (acc_t<T>, 4 per channel: a, k, mean, c) have one shape.
template <typename T>
struct BatchNormBackwardKernel {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(OpId::batch_norm_backward)) {
      using A = acc_t<T>;
      const bool training = c.args->norm_training;
      StridedPlan<4>({c.out, c.in[0], c.in[1], c.in[2]})
          .run([training](std::array<char*, 4> p, std::array<int64_t, 4> st, int64_t n) {
            for (int64_t i = 0; i < n; ++i) {
              const A* cf = reinterpret_cast<const A*>(p[3] + i * st[3]);
              A r = A(at<T>(p[1], i, st[1])) * cf[0];
              if (training) r = (r + (A(at<T>(p[2], i, st[2])) - cf[2]) * cf[1]) + cf[3];
              *reinterpret_cast<T*>(p[0] + i * st[0]) = T(r);
            }
          });
    } else {
      no_kernel("batch_norm_backward");
    }
  }
};

}  // namespace

void register_norm_backward_kernels(Backend& b) {
  register_for_row<LayerNormBackwardKernel>(b, OpId::layer_norm_backward);
  register_for_row<BatchNormBackwardKernel>(b, OpId::batch_norm_backward);
}

}  // namespace bm::cpu
