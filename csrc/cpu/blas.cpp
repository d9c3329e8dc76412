// The BLAS calls of blas.h, and who runs them.
//
// OpenBLAS keeps its own pool of threads, and after each product they spin for about 2^28 cycles
// (0.1 s) waiting for the next one. Between two products bessemer's own pool runs everything else
// (the convolutions, the norms, the activations), so on a 2-core machine OpenBLAS' spinning worker
// took one of the two cores from it: ResNet-18 ran its convolutions at half their speed as soon as
// one 1x1 convolution or the classifier had gone through BLAS (perf: 40% of the samples in
// blas_thread_server). Here OpenBLAS is told to use one thread, and a large product is split into
// row or column blocks that bessemer's pool hands out, each an OpenBLAS call on one thread: one
// pool, which sleeps when it is done. For a fixed thread count the split, and so every bit, is the
// same run after run; another count can change the last bits, as OpenBLAS' own split did
// (docs/determinism.md).
#include "cpu/blas.h"

#include <algorithm>
#include <type_traits>

#include "core/parallel.h"
#include "cpu/allocator.h"
#include "cpu/blas_threads.h"
#include "cpu/gemm_nt.h"

namespace bm::cpu {

namespace {

#if defined(BESSEMER_BLAS_ACCELERATE)
#define BM_CBLAS(name) cblas_##name
#else
// scipy-openblas32 prefixes every symbol with scipy_ so it can sit beside another OpenBLAS (numpy's).
#define BM_CBLAS(name) scipy_cblas_##name
#endif

#if defined(BESSEMER_BLAS_SCIPY_OPENBLAS)
// Run once when _core loads, before any product; OpenBLAS' own threads then sleep for good.
[[maybe_unused]] const bool openblas_single_threaded = [] {
  scipy_openblas_set_num_threads(1);
  return true;
}();
#endif

// Products below this many multiply-adds run on the calling thread: splitting costs a wake-up of
// the pool (about a microsecond) and a second packing of the shared operand.
constexpr double kSplitWork = 1 << 18;
// Blocks are multiples of this many rows or columns, the width of OpenBLAS' micro-kernels.
constexpr int64_t kBlock = 64;

// Calls run(lo, hi) for slices [lo, hi) of [0, len) on the pool, in kBlock-aligned slices, or once
// for the whole range when the work is small or only one thread is asked for.
template <typename F>
void split(int64_t len, double work, const F& run) {
#if defined(BESSEMER_BLAS_SCIPY_OPENBLAS)
  const int64_t blocks = (len + kBlock - 1) / kBlock;
  if (work >= kSplitWork && blocks > 1 && num_threads() > 1) {
    parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) { run(b0 * kBlock, std::min(len, b1 * kBlock)); });
    return;
  }
#else
  (void)work;
#endif
  run(int64_t(0), len);
}

template <typename T, typename Gemm>
void gemm_split(const Gemm& call, bool ta, bool tb, blas_int m, blas_int n, blas_int k, const T* a, blas_int lda,
                const T* b, blas_int ldb, T* c, blas_int ldc, T beta) {
  const double work = double(m) * double(n) * double(k);
  if (n >= m) {  // column blocks: op(b)'s columns j0..j1 and c's
    split(n, work, [&](int64_t j0, int64_t j1) {
      call(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, blas_int(j1 - j0), k,
           T(1), a, lda, tb ? b + j0 * ldb : b + j0, ldb, beta, c + j0, ldc);
    });
  } else {  // row blocks: op(a)'s rows i0..i1 and c's
    split(m, work, [&](int64_t i0, int64_t i1) {
      call(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blas_int(i1 - i0), n, k,
           T(1), ta ? a + i0 : a + i0 * lda, lda, b, ldb, beta, c + i0 * ldc, ldc);
    });
  }
}

template <typename T, typename Gemv>
void gemv_split(const Gemv& call, bool trans, blas_int rows, blas_int cols, const T* a, blas_int lda, const T* x,
                blas_int incx, T* y, blas_int incy) {
  const double work = double(rows) * double(cols);
  if (!trans) {  // y[i0..i1] = a[i0..i1, :] x
    split(rows, work, [&](int64_t i0, int64_t i1) {
      call(CblasRowMajor, CblasNoTrans, blas_int(i1 - i0), cols, T(1), a + i0 * lda, lda, x, incx, T(0), y + i0 * incy,
           incy);
    });
  } else {  // y[j0..j1] = a[:, j0..j1]^T x
    split(cols, work, [&](int64_t j0, int64_t j1) {
      call(CblasRowMajor, CblasTrans, rows, blas_int(j1 - j0), T(1), a + j0, lda, x, incx, T(0), y + j0 * incy, incy);
    });
  }
}

// x @ w^T with few rows and many columns (nn.Linear's forward at a small batch: op(b) is the
// weight, stored transposed): OpenBLAS packs a transposed b slowly. The same product as
// d = w @ x^T (n x m), then turned into c, took half the time: one thread, (8, 512) x (512, 1000)
// 424 -> 214 us, (16, 512) x (512, 512) 246 -> 129 us, (8, 4096) x (4096, 4096) 20.8 -> 12.0 ms;
// at 256 rows even. Turning d costs m n copies, a few microseconds for such m.
constexpr blas_int kTurnRows = 64;

// c = op(a) @ op(b) + beta c. x @ w^T with a few rows of x (tb, beta 0) takes one of the two
// paths above: float32 with up to kGemmNtRows rows the dot-product kernel (gemm_nt.cpp, where this
// CPU has one), otherwise up to kTurnRows rows the turned product.
template <typename T, typename Gemm>
void gemm_any(const Gemm& call, bool ta, bool tb, blas_int m, blas_int n, blas_int k, const T* a, blas_int lda,
              const T* b, blas_int ldb, T* c, blas_int ldc, T beta) {
  const bool few_rows_nt = !ta && tb && beta == T(0) && m > 1;
  if constexpr (std::is_same_v<T, float>) {
    if (few_rows_nt && m <= kGemmNtRows && gemm_nt_f32(m, n, k, a, lda, b, ldb, c, ldc)) return;
  }
#if defined(BESSEMER_BLAS_SCIPY_OPENBLAS)
  if (few_rows_nt && m <= kTurnRows && m < n) {
    Scratch<T> d(int64_t(m) * n);
    gemm_split<T>(call, false, true, n, m, k, b, ldb, a, lda, d.p, m, T(0));  // d = op(b)^T @ op(a)^T
    // d read in order, c written as m sequential rows (reading d a column at a time took one
    // cache line an element).
    const T* dp = d.p;
    parallel_for(0, n, std::max<int64_t>(1, (int64_t(1) << 14) / m), [&](int64_t j0, int64_t j1) {
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t i = 0; i < m; ++i) c[i * ldc + j] = dp[j * m + i];
    });
    return;
  }
#endif
  gemm_split<T>(call, ta, tb, m, n, k, a, lda, b, ldb, c, ldc, beta);
}

}  // namespace

void gemm(bool ta, bool tb, blas_int m, blas_int n, blas_int k, const float* a, blas_int lda, const float* b,
          blas_int ldb, float* c, blas_int ldc, float beta) {
  gemm_any<float>(BM_CBLAS(sgemm), ta, tb, m, n, k, a, lda, b, ldb, c, ldc, beta);
}

void gemm(bool ta, bool tb, blas_int m, blas_int n, blas_int k, const double* a, blas_int lda, const double* b,
          blas_int ldb, double* c, blas_int ldc, double beta) {
  gemm_any<double>(BM_CBLAS(dgemm), ta, tb, m, n, k, a, lda, b, ldb, c, ldc, beta);
}

void gemv(bool trans, blas_int rows, blas_int cols, const float* a, blas_int lda, const float* x, blas_int incx,
          float* y, blas_int incy) {
  gemv_split<float>(BM_CBLAS(sgemv), trans, rows, cols, a, lda, x, incx, y, incy);
}

void gemv(bool trans, blas_int rows, blas_int cols, const double* a, blas_int lda, const double* x, blas_int incx,
          double* y, blas_int incy) {
  gemv_split<double>(BM_CBLAS(dgemv), trans, rows, cols, a, lda, x, incx, y, incy);
}

int blas_threads() {
#if defined(BESSEMER_BLAS_SCIPY_OPENBLAS)
  return scipy_openblas_get_num_threads();
#else
  return 0;
#endif
}

}  // namespace bm::cpu
