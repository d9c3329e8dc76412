// matmul: out (B..., M, N) = a (B..., M, K) @ b (B..., K, N). The op layer has already turned 1-D
// operands into matrices and broadcast the batch dims (zero strides); K > 0 and out is non-empty.
// float32/float64 go to the platform BLAS (strided operands are passed as they are whenever BLAS
// can address them); float16/bfloat16 too, converted to float32 (half_matmul); the integer dtypes
// use the blocked strided kernel in matmul_fallback.h.
#include <algorithm>
#include <climits>
#include <limits>
#include <mutex>
#include <cstring>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/errors.h"
#include "core/parallel.h"
#include "core/tensor.h"
#include "cpu/allocator.h"
#include "cpu/blas.h"
#include "cpu/half_convert.h"
#include "cpu/kernels.h"
#include "cpu/matmul_fallback.h"

namespace bm::cpu {

namespace {

// An operand BLAS cannot address (non-unit inner strides, zero strides) is copied to a contiguous
// buffer. Broadcast batch entries share their matrix, so the copy is reused while the source is.
template <typename T>
struct StagedOperand {
  std::vector<T> buf;
  const T* staged_from = nullptr;

  BlasOperand<T> get(const MatRef<const T>& m) {
    if (auto v = blas_view(m)) return *v;
    if (m.base != staged_from) {
      buf.resize(size_t(m.rows * m.cols));
      for (int64_t i = 0; i < m.rows; ++i)
        for (int64_t j = 0; j < m.cols; ++j) buf[size_t(i * m.cols + j)] = m.at(i, j);
      staged_from = m.base;
    }
    return {buf.data(), false, blas_int(m.cols)};
  }
};

// One row stride that walks dims [0, n) of t in row-major order, if one exists (size-1 dims are
// skipped; 0 when every dim has size 1). Used to fold batch dims into M.
std::optional<int64_t> merged_row_stride(const Tensor& t, int n) {
  std::optional<int64_t> inner;
  int64_t expect = 0;
  for (int d = n - 1; d >= 0; --d) {
    if (t.shape[d] == 1) continue;
    if (inner && t.strides[d] != expect) return std::nullopt;
    if (!inner) inner = t.strides[d];
    expect = t.strides[d] * t.shape[d];
  }
  return inner ? *inner : 0;
}

// The three matrices of batch entry `bi`, from per-dim batch strides.
template <typename T>
struct Batches {
  const Tensor *a, *b;
  Tensor* c;
  int nb;  // number of batch dims
  int64_t count = 1, M, N, K;

  Batches(const Tensor* a_, const Tensor* b_, Tensor* c_) : a(a_), b(b_), c(c_), nb(int(c_->ndim()) - 2) {
    for (int d = 0; d < nb; ++d) count *= c->shape[d];
    M = a->shape[nb];
    K = a->shape[nb + 1];
    N = b->shape[nb + 1];
  }

  std::tuple<MatRef<const T>, MatRef<const T>, MatRef<T>> operator()(int64_t bi) const {
    int64_t oa = 0, ob = 0, oc = 0;
    for (int d = nb - 1; d >= 0; --d) {
      int64_t i = bi % c->shape[d];
      bi /= c->shape[d];
      oa += i * a->strides[d];
      ob += i * b->strides[d];
      oc += i * c->strides[d];
    }
    return {MatRef<const T>{a->data<T>() + oa, M, K, a->strides[nb], a->strides[nb + 1]},
            MatRef<const T>{b->data<T>() + ob, K, N, b->strides[nb], b->strides[nb + 1]},
            MatRef<T>{c->data<T>() + oc, M, N, c->strides[nb], c->strides[nb + 1]}};
  }
};

template <typename T>
void blas_matmul(const Batches<T>& bt) {
  int64_t count = bt.count, M = bt.M;
  // b shared by every batch entry (nn.Linear on (B, T, C) inputs): when the rows of a and out walk
  // the batch dims with one stride, the whole batch is one (count*M) x K product. One big gemm
  // beats many small ones and lets BLAS split the work across its threads.
  std::optional<MatRef<const T>> fa;
  std::optional<MatRef<T>> fc;
  bool b_shared = true;
  for (int d = 0; d < bt.nb; ++d) b_shared = b_shared && (bt.c->shape[d] == 1 || bt.b->strides[d] == 0);
  if (count > 1 && b_shared) {
    auto ra = merged_row_stride(*bt.a, bt.nb + 1), rc = merged_row_stride(*bt.c, bt.nb + 1);
    if (ra && rc) {
      auto [a0, b0, c0] = bt(0);
      fa = MatRef<const T>{a0.base, count * M, a0.cols, *ra, a0.cs};
      fc = MatRef<T>{c0.base, count * M, c0.cols, *rc, c0.cs};
      count = 1;
      M = fa->rows;
    }
  }
  if (M > kBlasIntMax || bt.N > kBlasIntMax || bt.K > kBlasIntMax) {  // beyond 32-bit BLAS sizes
    matmul_fallback<T>(bt.count, bt.M, bt.N, bt.K, bt);
    return;
  }
  StagedOperand<T> sa, sb;
  std::vector<T> cbuf;
  for (int64_t bi = 0; bi < count; ++bi) {
    auto [a, b, c] = bt(bi);
    if (fa) { a = *fa; c = *fc; }
    BlasOperand<T> A = sa.get(a), B = sb.get(b);
    // out is fresh and contiguous from the dispatcher; a caller-given strided out goes via a buffer.
    MatRef<const T> cview{c.base, c.rows, c.cols, c.rs, c.cs};
    auto C = blas_view(cview);
    if (C && !C->trans) {
      product(A.trans, B.trans, blas_int(M), blas_int(bt.N), blas_int(bt.K), A.data, A.ld, B.data, B.ld, c.base,
              C->ld);
    } else {
      cbuf.resize(size_t(M * bt.N));
      product(A.trans, B.trans, blas_int(M), blas_int(bt.N), blas_int(bt.K), A.data, A.ld, B.data, B.ld, cbuf.data(),
              blas_int(bt.N));
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < bt.N; ++j) c.at(i, j) = cbuf[size_t(i * bt.N + j)];
    }
  }
}

// A half-type matrix into a contiguous float32 one (rows x cols), runs converted vectorised.
// Rows split between the threads once a matrix has kConvertGrain elements a chunk.
constexpr int64_t kConvertGrain = 16384;

template <typename T>
void to_float(const MatRef<const T>& m, float* dst) {
  parallel_for(0, m.rows, std::max<int64_t>(1, kConvertGrain / m.cols), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const T* row = m.base + i * m.rs;
      float* d = dst + i * m.cols;
      if (m.cs != 1) {
        for (int64_t j = 0; j < m.cols; ++j) d[j] = float(row[j * m.cs]);
      } else {
        convert_half_run(row, d, m.cols);
      }
    }
  });
}

// float16 / bfloat16: both operands converted once to float32, the product by BLAS in float32,
// rounded once to the half type. The fallback kernel accumulates in float32 as well (as torch's
// CPU kernels do), only slower: 256 x 256 float16 ran at 13 GFLOP/s on an Intel Xeon, where torch
// reached 206. The summation order is BLAS's, so the last bit may differ from the fallback's.
template <typename T>
void half_matmul(const Batches<T>& bt) {
  const int64_t M = bt.M, N = bt.N, K = bt.K;
  Scratch<float> fa(M * K), fb(K * N), fc(M * N);
  const T* b_from = nullptr;  // broadcast batch entries share b: converted once
  for (int64_t bi = 0; bi < bt.count; ++bi) {
    auto [a, b, c] = bt(bi);
    const MatRef<T> out = c;  // (the lambda below may not capture a structured binding in C++17)
    to_float(a, fa.p);
    if (b.base != b_from) to_float(b, fb.p), b_from = b.base;
    product(false, false, blas_int(M), blas_int(N), blas_int(K), fa.p, blas_int(K), fb.p, blas_int(N), fc.p,
            blas_int(N));
    parallel_for(0, M, std::max<int64_t>(1, kConvertGrain / N), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const float* r = fc.p + i * N;
        T* d = out.base + i * out.rs;
        if (out.cs != 1) {
          for (int64_t j = 0; j < N; ++j) d[j * out.cs] = T(r[j]);
        } else {
          convert_half_run(r, d, N);
        }
      }
    });
  }
}

template <typename T>
struct MatmulKernel {
  static void run(const KernelCall& call) {
    if constexpr (std::is_same_v<T, bool>) {
      throw UnsupportedError("[matmul] bool inputs have no matmul kernel");  // excluded by the row mask
    } else {
      Batches<T> bt(call.in[0], call.in[1], call.out);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        blas_matmul<T>(bt);
      } else if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>) {
        if (bt.M <= kBlasIntMax && bt.N <= kBlasIntMax && bt.K <= kBlasIntMax) half_matmul<T>(bt);
        else matmul_fallback<T>(bt.count, bt.M, bt.N, bt.K, bt);
      } else {
        matmul_fallback<T>(bt.count, bt.M, bt.N, bt.K, bt);
      }
    }
  }
};

}  // namespace

void register_matmul_kernels(Backend& b) { register_for_row<MatmulKernel>(b, OpId::matmul); }

}  // namespace bm::cpu
