// Normalisation kernels (the op layer, core/ops_nn_norm.cpp, checks and prepares the inputs):
//   layer_norm  every row of the trailing norm_ndim dims -> (x - mean) * rstd [* w] [+ b], with the
//               mean and the (biased) variance from two passes in acc_t<T> (float for the half
//               types). The row may have any strides: a transposed view normalises the dims it
//               shows, not the memory it happens to sit in.
//   batch_norm  out = x * scale + shift in one pass, scale/shift (acc_t<T>, per channel, computed by
//               the op layer) arriving as zero-stride views of x's shape.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/elementwise.h"
#include "cpu/kernels.h"
#include "cpu/norm_f32.h"
#include "cpu/norm_rows.h"

namespace bm::cpu {

namespace {

template <typename T>
void layer_norm_impl(const KernelCall& c) {
  using A = acc_t<T>;
  const Tensor& x = *c.in[0];
  const Tensor& out = *c.out;
  const OpArgs& args = *c.args;
  const size_t k = size_t(args.norm_ndim);
  const DimRun x_rows = row_dims(x, k), x_cols = col_dims(x, k);
  const DimRun o_rows = row_dims(out, k), o_cols = col_dims(out, k);
  const int64_t rows = x_rows.numel(), n = x_cols.numel();
  // weight and bias: contiguous over the row, in T (the op layer made them so).
  const T* w = args.norm_weight ? c.in[1]->data<T>() : nullptr;
  const T* b = args.norm_bias ? c.in[args.norm_weight ? 2 : 1]->data<T>() : nullptr;
  const A eps = A(args.norm_eps);
  const T* xb = x.data<T>();
  T* ob = out.data<T>();
  const bool direct_in = std::is_same_v<T, A> && x_cols.unit();  // read the row in place
  const bool direct_out = o_cols.unit();

  parallel_for(0, rows, row_grain(n), [&](int64_t r0, int64_t r1) {
    std::vector<A> in_buf(direct_in ? 0 : n), out_buf(direct_out ? 0 : n);
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = xb + offset_of(x_rows, r);
      T* orow = ob + offset_of(o_rows, r);
      const A* v;
      if (direct_in) {
        v = reinterpret_cast<const A*>(xr);
      } else {
        for_each_offset(x_cols, [&](int64_t j, int64_t off) { in_buf[size_t(j)] = A(xr[off]); });
        v = in_buf.data();
      }
      A mean, rstd;
      row_stats(v, n, eps, mean, rstd);
      // y[j] = (v[j] - mean) * rstd [* w[j]] [+ b[j]], written straight to a dense output row.
      auto write = [&](auto* y) {
        using Y = std::remove_pointer_t<decltype(y)>;
        if (w && b) for (int64_t j = 0; j < n; ++j) y[j] = Y((v[j] - mean) * rstd * A(w[j]) + A(b[j]));
        else if (w) for (int64_t j = 0; j < n; ++j) y[j] = Y((v[j] - mean) * rstd * A(w[j]));
        else if (b) for (int64_t j = 0; j < n; ++j) y[j] = Y((v[j] - mean) * rstd + A(b[j]));
        else for (int64_t j = 0; j < n; ++j) y[j] = Y((v[j] - mean) * rstd);
      };
      if constexpr (std::is_same_v<T, float>) {
        normalize_f32(v, n, mean, rstd, w, b, direct_out ? orow : out_buf.data());
        if (!direct_out) for_each_offset(o_cols, [&](int64_t j, int64_t off) { orow[off] = out_buf[size_t(j)]; });
      } else if (direct_out) {
        write(orow);
      } else {
        write(out_buf.data());
        for_each_offset(o_cols, [&](int64_t j, int64_t off) { orow[off] = T(out_buf[size_t(j)]); });
      }
    }
  });
}

template <typename T>
struct LayerNormKernel {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(OpId::layer_norm)) layer_norm_impl<T>(c);
    else no_kernel("layer_norm");
  }
};

// out = x * scale + shift; operands out, x (T) and scale, shift (acc_t<T>) have one shape. For
// NCHW the plan's rows are channel planes, where scale and shift are broadcast scalars.
template <typename T>
struct BatchNormKernel {
  static void run(const KernelCall& c) {
    if constexpr (row_has<T>(OpId::batch_norm)) {
      using A = acc_t<T>;
      StridedPlan<4>({c.out, c.in[0], c.in[1], c.in[2]}).run([](std::array<char*, 4> p, std::array<int64_t, 4> st, int64_t n) {
        if (st[0] == int64_t(sizeof(T)) && st[1] == int64_t(sizeof(T)) && st[2] == 0 && st[3] == 0) {
          T* o = reinterpret_cast<T*>(p[0]);
          const T* x = reinterpret_cast<const T*>(p[1]);
          const A s = *reinterpret_cast<const A*>(p[2]), t = *reinterpret_cast<const A*>(p[3]);
          if constexpr (std::is_same_v<T, float>) scale_shift_f32(x, s, t, o, n);  // AVX2/AVX-512 rows
          else for (int64_t k = 0; k < n; ++k) o[k] = T(A(x[k]) * s + t);
        } else {
          for (int64_t k = 0; k < n; ++k)
            *reinterpret_cast<T*>(p[0] + k * st[0]) =
                T(A(at<T>(p[1], k, st[1])) * at<A>(p[2], k, st[2]) + at<A>(p[3], k, st[3]));
        }
      });
    } else {
      no_kernel("batch_norm");
    }
  }
};

}  // namespace

void register_norm_kernels(Backend& b) {
  register_for_row<LayerNormKernel>(b, OpId::layer_norm);
  register_for_row<BatchNormKernel>(b, OpId::batch_norm);
}

}  // namespace bm::cpu
