// index_select, index_add, index_copy and nonzero. The op layer (core/ops_index_rows.cpp) has
// validated every index; a bad one still cannot touch memory out of bounds here (index_select
// writes 0, index_copy skips the row). shaders/index.metal computes the same results in the same
// order, so both backends give the same bits (index_add adds each output's contributions in index
// order, half types in float32).
#include <algorithm>
#include <array>
#include <type_traits>
#include <vector>

#include "cpu/convert.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"

namespace bm::cpu {

namespace {

// The dims other than `dim`, shared by K tensors of equal shape there, merged where contiguous in
// all of them; offsets (in elements) of a run of these "rest" elements in row-major order.
template <int K>
struct Rest {
  Shape shape;
  std::array<Shape, K> strides;
  int64_t numel = 1;

  Rest(const std::array<const Tensor*, K>& ts, int64_t dim) {
    const Shape& s = ts[0]->shape;
    for (size_t d = 0; d < s.size(); ++d) {
      if (int64_t(d) == dim || s[d] == 1) continue;
      numel *= s[d];
      bool merge = !shape.empty();
      for (int k = 0; k < K && merge; ++k) merge = strides[k].back() == ts[k]->strides[d] * s[d];
      if (merge) {
        shape.back() *= s[d];
        for (int k = 0; k < K; ++k) strides[k].back() = ts[k]->strides[d];
      } else {
        shape.push_back(s[d]);
        for (int k = 0; k < K; ++k) strides[k].push_back(ts[k]->strides[d]);
      }
    }
    for (size_t d = 0; d < s.size(); ++d)
      if (s[d] == 0 && int64_t(d) != dim) numel = 0;
  }

  // off[k][i] = offset in tensor k of rest element e0 + i, for i < n.
  void offsets(int64_t e0, int64_t n, std::array<int64_t*, K> off) const {
    const int nd = int(shape.size());
    if (nd == 0) {
      for (int k = 0; k < K; ++k) off[k][0] = 0;
      return;
    }
    if (nd == 1) {
      for (int k = 0; k < K; ++k)
        for (int64_t i = 0; i < n; ++i) off[k][i] = (e0 + i) * strides[k][0];
      return;
    }
    std::vector<int64_t> idx(static_cast<size_t>(nd));
    std::array<int64_t, K> cur{};
    int64_t rem = e0;
    for (int d = nd - 1; d >= 0; --d) {
      idx[size_t(d)] = rem % shape[size_t(d)];
      rem /= shape[size_t(d)];
      for (int k = 0; k < K; ++k) cur[k] += idx[size_t(d)] * strides[k][size_t(d)];
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int k = 0; k < K; ++k) off[k][i] = cur[k];
      for (int d = nd - 1; d >= 0; --d) {
        for (int k = 0; k < K; ++k) cur[k] += strides[k][size_t(d)];
        if (++idx[size_t(d)] < shape[size_t(d)]) break;
        for (int k = 0; k < K; ++k) cur[k] -= strides[k][size_t(d)] * shape[size_t(d)];
        idx[size_t(d)] = 0;
      }
    }
  }
};

constexpr int64_t kBlock = 1024;  // rest elements whose offsets are computed at once

// Calls body(row, off, n) for rows [0, nrows) and every block of n rest elements, with off[k]
// the block's offsets in tensor k. Rows are split over the cores; blocks are the outer loop so a
// block's offsets serve all the rows of a task.
template <int K, typename Body>
void for_rows(const Rest<K>& rest, int64_t nrows, Body&& body) {
  if (rest.numel == 0 || nrows == 0) return;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / rest.numel);
  parallel_for(0, nrows, grain, [&](int64_t r0, int64_t r1) {
    std::array<std::vector<int64_t>, K> buf;
    std::array<int64_t*, K> off;
    for (int k = 0; k < K; ++k) {
      buf[k].resize(size_t(std::min(kBlock, rest.numel)));
      off[k] = buf[k].data();
    }
    for (int64_t e0 = 0; e0 < rest.numel; e0 += kBlock) {
      const int64_t n = std::min(kBlock, rest.numel - e0);
      rest.offsets(e0, n, off);
      for (int64_t r = r0; r < r1; ++r) body(r, off, n);
    }
  });
}

// t viewed with shape[dim] = 1 and its stride there kept: the rows share the rest dims.
Tensor row_view(const Tensor& t, int64_t dim) {
  Tensor v = t;
  v.shape[size_t(dim)] = 1;
  return v;
}

template <typename T>
struct IndexSelectKernel {
  template <typename I>
  static void gather(const Tensor& x, const Tensor& idx, Tensor& out, int64_t dim) {
    const Tensor xv = row_view(x, dim), ov = row_view(out, dim);
    Rest<2> rest({&ov, &xv}, dim);
    const T* xb = x.data<T>();
    T* ob = out.data<T>();
    const I* ib = idx.data<I>();
    const int64_t ist = idx.strides[0], xst = x.strides[size_t(dim)], ost = out.strides[size_t(dim)];
    const int64_t size = x.shape[size_t(dim)];
    if (rest.shape.size() == 1 && rest.strides[0][0] == 1 && rest.strides[1][0] == 1) {
      // Rows contiguous in both (index_select along dim 0 of a contiguous tensor, the usual case):
      // a copy per row, the next row prefetched.
      const int64_t len = rest.numel, nrows = out.shape[size_t(dim)];
      parallel_for(0, nrows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(len, 1)), [&](int64_t k0, int64_t k1) {
        for (int64_t k = k0; k < k1; ++k) {
          if (k + 1 < k1) {
            const int64_t rn = int64_t(ib[(k + 1) * ist]);
            if (rn >= 0 && rn < size) prefetch_row(xb + rn * xst, len * int64_t(sizeof(T)));
          }
          const int64_t r = int64_t(ib[k * ist]);
          T* o = ob + k * ost;
          if (r < 0 || r >= size) std::fill(o, o + len, T(0));
          else std::copy(xb + r * xst, xb + r * xst + len, o);
        }
      });
      return;
    }
    for_rows(rest, out.shape[size_t(dim)], [&](int64_t k, const std::array<int64_t*, 2>& off, int64_t n) {
      const int64_t r = int64_t(ib[k * ist]);
      T* o = ob + k * ost;
      if (r < 0 || r >= size) {
        for (int64_t e = 0; e < n; ++e) o[off[0][e]] = T(0);
        return;
      }
      const T* s = xb + r * xst;
      for (int64_t e = 0; e < n; ++e) o[off[0][e]] = s[off[1][e]];
    });
  }

  static void run(const KernelCall& c) {
    const int64_t dim = c.args->index_dim;
    if (c.in[1]->dtype == DType::Int32) gather<int32_t>(*c.in[0], *c.in[1], *c.out, dim);
    else gather<int64_t>(*c.in[0], *c.in[1], *c.out, dim);
  }
};

// Accumulation for index_add: bool is or, integers wrap (as add), half types add in float32.
template <typename A>
inline A add_acc(A a, A b) {
  if constexpr (std::is_same_v<A, bool>) return a || b;
  else if constexpr (std::is_integral_v<A>) return A(std::make_unsigned_t<A>(a) + std::make_unsigned_t<A>(b));
  else return a + b;
}

template <typename T>
struct IndexAddKernel {
  static void run(const KernelCall& c) {
    using A = acc_t<T>;
    const Tensor &base = *c.in[0], &src = *c.in[1], &csr = *c.in[2];
    Tensor& out = *c.out;
    const int64_t dim = c.args->index_dim, rows = out.shape[size_t(dim)];
    const Tensor ov = row_view(out, dim), bv = row_view(base, dim), sv = row_view(src, dim);
    Rest<3> rest({&ov, &bv, &sv}, dim);
    const int64_t* row_ptr = csr.data<int64_t>();
    const int64_t* order = row_ptr + rows + 1;
    const int64_t ost = out.strides[size_t(dim)], bst = base.strides[size_t(dim)], sst = src.strides[size_t(dim)];
    const T* bb = base.data<T>();
    const T* sb = src.data<T>();
    T* ob = out.data<T>();
    for_rows(rest, rows, [&](int64_t p, const std::array<int64_t*, 3>& off, int64_t n) {
      A acc[kBlock];
      const T* b = bb + p * bst;
      for (int64_t e = 0; e < n; ++e) acc[e] = convert<A>(b[off[1][e]]);
      for (int64_t q = row_ptr[p]; q < row_ptr[p + 1]; ++q) {
        const T* s = sb + order[q] * sst;
        for (int64_t e = 0; e < n; ++e) acc[e] = add_acc(acc[e], convert<A>(s[off[2][e]]));
      }
      T* o = ob + p * ost;
      for (int64_t e = 0; e < n; ++e) o[off[0][e]] = convert<T>(acc[e]);
    });
  }
};

template <typename T>
struct IndexCopyKernel {
  static void run(const KernelCall& c) {
    const Tensor &src = *c.in[0], &pairs = *c.in[1];
    Tensor& out = *c.out;
    const int64_t dim = c.args->index_dim, nu = pairs.shape[1], size = out.shape[size_t(dim)];
    const Tensor ov = row_view(out, dim), sv = row_view(src, dim);
    Rest<2> rest({&ov, &sv}, dim);
    const int64_t* targets = pairs.data<int64_t>();
    const int64_t* sources = targets + nu;
    const int64_t ost = out.strides[size_t(dim)], sst = src.strides[size_t(dim)];
    const T* sb = src.data<T>();
    T* ob = out.data<T>();
    for_rows(rest, nu, [&](int64_t k, const std::array<int64_t*, 2>& off, int64_t n) {
      const int64_t p = targets[k];
      if (p < 0 || p >= size) return;
      T* o = ob + p * ost;
      const T* s = sb + sources[k] * sst;
      for (int64_t e = 0; e < n; ++e) o[off[0][e]] = s[off[1][e]];
    });
  }
};

// Row-major walk over the input; each nonzero element writes its coordinates as the next row.
template <typename T>
struct NonzeroKernel {
  static void run(const KernelCall& c) {
    const Tensor& x = *c.in[0];
    Tensor& out = *c.out;
    const int64_t nd = x.ndim(), n_out = out.shape[0], os0 = out.strides[0], os1 = out.strides[1];
    const T* xb = x.data<T>();
    int64_t* ob = out.data<int64_t>();
    std::vector<int64_t> idx(size_t(nd), 0);
    int64_t pos = 0, row = 0;
    for (int64_t count = x.numel(); count > 0 && row < n_out; --count) {
      if (convert<bool>(xb[pos])) {
        for (int64_t d = 0; d < nd; ++d) ob[row * os0 + d * os1] = idx[size_t(d)];
        ++row;
      }
      for (int64_t d = nd - 1; d >= 0; --d) {
        pos += x.strides[size_t(d)];
        if (++idx[size_t(d)] < x.shape[size_t(d)]) break;
        pos -= x.strides[size_t(d)] * x.shape[size_t(d)];
        idx[size_t(d)] = 0;
      }
    }
  }
};

}  // namespace

void register_index_kernels(Backend& b) {
  register_for_row<IndexSelectKernel>(b, OpId::index_select);
  register_for_row<IndexAddKernel>(b, OpId::index_add);
  register_for_row<IndexCopyKernel>(b, OpId::index_copy);
  register_for_row<NonzeroKernel>(b, OpId::nonzero);
}

}  // namespace bm::cpu
