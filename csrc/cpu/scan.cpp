// cumsum, cumprod and argsort along args->dim, any strides (views, 0-d, size-1 dims).
//
// All three are row operations: the other dims number the rows, which run in parallel; each row
// is walked with its own element stride, so no input is copied.
//   cumsum / cumprod  inclusive scans in input order. The dispatcher has already cast bool/int to
//                     int64 (SumLike), so integers accumulate in int64 with wrap-around (through
//                     uint64, defined behaviour); float32/float64 accumulate in double and half
//                     types in float, as torch's CPU kernels do.
//   argsort           a stable sort of (key, position) pairs; NaN sorts as the largest value, so
//                     ascending puts NaNs last and descending first, each keeping input order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "core/tensor.h"
#include "cpu/kernels.h"

namespace bm::cpu {

namespace {

// The rows of an op along `dim`: for row r, the element offsets (in elements) of its first input
// and output element; the stride along the dim for each.
struct Rows {
  int64_t n_rows = 1, len = 1, in_st = 0, out_st = 0;
  std::vector<int64_t> shape, in_strides, out_strides;  // the other dims

  Rows(const Tensor& in, const Tensor& out, int64_t dim) {
    for (int64_t d = 0; d < in.ndim(); ++d) {
      if (d == dim) {
        len = in.shape[d];
        in_st = in.strides[d];
        out_st = out.strides[d];
      } else {
        shape.push_back(in.shape[d]);
        in_strides.push_back(in.strides[d]);
        out_strides.push_back(out.strides[d]);
        n_rows *= in.shape[d];
      }
    }
  }
  void offsets(int64_t r, int64_t& io, int64_t& oo) const {
    io = 0;
    oo = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      const int64_t i = r % shape[d];
      r /= shape[d];
      io += i * in_strides[d];
      oo += i * out_strides[d];
    }
  }
};

// Rows per task: about 16K elements each, at least one row.
int64_t row_grain(const Rows& rw) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(rw.len, 1)); }

template <typename T>
using scan_acc_t = std::conditional_t<std::is_integral_v<T>, uint64_t,
                                      std::conditional_t<std::is_same_v<acc_t<T>, float> && !std::is_same_v<T, float>,
                                                         float, double>>;

template <typename T, bool kProd>
void run_scan(const KernelCall& c) {
  const Tensor& in = *c.in[0];
  const Tensor& out = *c.out;
  Rows rw(in, out, c.args->dim);
  const T* x = in.data<T>();
  T* y = out.data<T>();
  using A = scan_acc_t<T>;
  parallel_for(0, rw.n_rows, row_grain(rw), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t io, oo;
      rw.offsets(r, io, oo);
      A acc = kProd ? A(1) : A(0);
      for (int64_t k = 0; k < rw.len; ++k) {
        A v;
        if constexpr (std::is_integral_v<T>) v = A(int64_t(x[io + k * rw.in_st]));
        else v = A(acc_t<T>(x[io + k * rw.in_st]));
        acc = kProd ? A(acc * v) : A(acc + v);
        if constexpr (std::is_same_v<T, bool>) y[oo + k * rw.out_st] = acc != 0;
        else if constexpr (std::is_integral_v<T>) y[oo + k * rw.out_st] = T(int64_t(acc));
        else y[oo + k * rw.out_st] = T(acc);
      }
    }
  });
}

template <typename T>
struct CumsumKernel {
  static void run(const KernelCall& c) { run_scan<T, false>(c); }
};

template <typename T>
struct CumprodKernel {
  static void run(const KernelCall& c) { run_scan<T, true>(c); }
};

// Sort keys: bool as 0/1, half types as float, NaN larger than everything (and equal to NaN).
template <typename T>
using key_t = std::conditional_t<std::is_same_v<T, bool>, int, acc_t<T>>;

template <typename K>
bool key_less(K a, K b) {
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <typename T>
struct ArgsortKernel {
  static void run(const KernelCall& c) {
    const Tensor& in = *c.in[0];
    const Tensor& out = *c.out;
    Rows rw(in, out, c.args->dim);
    const bool desc = c.args->descending;
    const T* x = in.data<T>();
    int64_t* y = out.data<int64_t>();
    using K = key_t<T>;
    parallel_for(0, rw.n_rows, row_grain(rw), [&](int64_t r0, int64_t r1) {
      std::vector<std::pair<K, int64_t>> row(size_t(rw.len));
      for (int64_t r = r0; r < r1; ++r) {
        int64_t io, oo;
        rw.offsets(r, io, oo);
        for (int64_t k = 0; k < rw.len; ++k) row[size_t(k)] = {K(x[io + k * rw.in_st]), k};
        if (desc)
          std::stable_sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return key_less(b.first, a.first); });
        else
          std::stable_sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return key_less(a.first, b.first); });
        for (int64_t k = 0; k < rw.len; ++k) y[oo + k * rw.out_st] = row[size_t(k)].second;
      }
    });
  }
};

}  // namespace

void register_scan_kernels(Backend& b) {
  register_for_row<CumsumKernel>(b, OpId::cumsum);
  register_for_row<CumprodKernel>(b, OpId::cumprod);
  register_for_row<ArgsortKernel>(b, OpId::argsort);
}

}  // namespace bm::cpu
