// float32 x @ w^T for a few rows of x (nn.Linear's forward at a small batch), as dot products
// along rows of both operands; gemm_nt.cpp says why. blas.cpp tries it before OpenBLAS.
#pragma once
#include <cstdint>

namespace bm::cpu {

// The most rows of x gemm_nt_f32 takes.
constexpr int64_t kGemmNtRows = 16;

// c (m x n, rows ldc apart) = a (m x k, rows lda apart) @ b^T, b (n x k, rows ldb apart), for
// 1 <= m <= kGemmNtRows, k >= 1. Returns false, having done nothing, where this machine's copy has
// no kernel (the baseline x86-64 copy, other architectures): the caller then uses BLAS.
//
// Each element of c is 16 partial sums (element kk of the row pair goes to sum kk % 16, one fused
// multiply-add each, in k order) added by a fixed tree: the AVX2 and AVX-512 copies give the same
// bits, and so does every thread count.
bool gemm_nt_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                 int64_t ldc);

}  // namespace bm::cpu
