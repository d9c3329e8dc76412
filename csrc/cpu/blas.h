// The platform BLAS behind one spelling (Accelerate on macOS, scipy-openblas32 elsewhere), shared
// by the kernels that hand products to it (matmul.cpp, conv.cpp).
#pragma once
#include <cstdint>
#include <limits>
#include <optional>

#include "cpu/matmul_fallback.h"  // MatRef

#if defined(BESSEMER_BLAS_ACCELERATE)
#include <Accelerate/Accelerate.h>
#elif defined(BESSEMER_BLAS_SCIPY_OPENBLAS)
#include <cblas.h>
#else
#error "no BLAS configured: CMake defines BESSEMER_BLAS_ACCELERATE or BESSEMER_BLAS_SCIPY_OPENBLAS"
#endif

namespace bm::cpu {

#if defined(BESSEMER_BLAS_ACCELERATE) && defined(ACCELERATE_NEW_LAPACK)
using blas_int = __LAPACK_int;  // int, or long with ACCELERATE_LAPACK_ILP64
#elif defined(BESSEMER_BLAS_ACCELERATE)
using blas_int = int;
#else
using blas_int = blasint;
#endif

// c (m x n) = op(a) (m x k) @ op(b) (k x n) + beta * c, row-major; op transposes when ta / tb.
// With OpenBLAS the product is split across bessemer's thread pool and each part runs on one
// OpenBLAS thread (blas.cpp says why); Accelerate schedules its own threads.
void gemm(bool ta, bool tb, blas_int m, blas_int n, blas_int k, const float* a, blas_int lda, const float* b,
          blas_int ldb, float* c, blas_int ldc, float beta = 0.0f);
void gemm(bool ta, bool tb, blas_int m, blas_int n, blas_int k, const double* a, blas_int lda, const double* b,
          blas_int ldb, double* c, blas_int ldc, double beta = 0.0);

// y = op(a) x, a row-major (rows x cols) with leading dimension lda; split as gemm is.
void gemv(bool trans, blas_int rows, blas_int cols, const float* a, blas_int lda, const float* x, blas_int incx,
          float* y, blas_int incy);
void gemv(bool trans, blas_int rows, blas_int cols, const double* a, blas_int lda, const double* x, blas_int incx,
          double* y, blas_int incy);

// c (m x n, leading dimension ldc) = op(a) @ op(b). A product with one row or one column is a
// matrix-vector product: gemv reads the matrix once, where gemm with n == 1 is several times
// slower (a batch-1 nn.Linear is exactly this case).
template <typename T>
void product(bool ta, bool tb, blas_int m, blas_int n, blas_int k, const T* a, blas_int lda, const T* b, blas_int ldb,
             T* c, blas_int ldc) {
  if (n == 1) {  // c[:, 0] = op(a) @ op(b)[:, 0]; op(b)[kk, 0] is b[kk * ldb] (or b[kk] if transposed)
    if (ta) gemv(true, k, m, a, lda, b, tb ? 1 : ldb, c, ldc);
    else gemv(false, m, k, a, lda, b, tb ? 1 : ldb, c, ldc);
  } else if (m == 1) {  // c[0, :] = op(b)^T @ op(a)[0, :]; op(a)[0, kk] is a[kk] (or a[kk * lda])
    if (tb) gemv(false, n, k, b, ldb, a, ta ? lda : 1, c, 1);
    else gemv(true, k, n, b, ldb, a, ta ? lda : 1, c, 1);
  } else {
    gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
  }
}

constexpr int64_t kBlasIntMax = std::numeric_limits<blas_int>::max();

// How BLAS sees one row-major operand: its data, whether to transpose, and the leading dimension.
template <typename T>
struct BlasOperand {
  const T* data;
  bool trans;
  blas_int ld;
};

// A view BLAS can read in place: unit stride along one dim and a leading dimension along the
// other that is at least the length of the first (BLAS rejects smaller ones, and a zero or
// overlapping stride would be one). Dims of size 1 have no meaningful stride.
template <typename T>
std::optional<BlasOperand<T>> blas_view(const MatRef<const T>& m) {
  auto ok = [](int64_t ld) { return ld <= kBlasIntMax; };
  if ((m.cols == 1 || m.cs == 1) && (m.rows == 1 || m.rs >= m.cols)) {
    int64_t ld = m.rows == 1 ? m.cols : m.rs;
    if (ok(ld)) return BlasOperand<T>{m.base, false, blas_int(ld)};
  }
  if ((m.rows == 1 || m.rs == 1) && (m.cols == 1 || m.cs >= m.rows)) {
    int64_t ld = m.cols == 1 ? m.rows : m.cs;
    if (ok(ld)) return BlasOperand<T>{m.base, true, blas_int(ld)};
  }
  return std::nullopt;
}

}  // namespace bm::cpu
