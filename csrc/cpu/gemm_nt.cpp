// x @ w^T for a few rows of x (gemm_nt.h), compiled once per instruction set
// (bessemer_isa_variants in CMakeLists.txt, -ffp-contract=off).
//
// Why: nn.Linear's forward at batch 2-16 is x (m x k) @ w^T with w (n x k) stored row by row.
// OpenBLAS packs w, transposed, on every call, which costs more than the arithmetic for so few
// rows of x: on an Intel Xeon (2 threads) (8, 512) x (512, 1000)^T took 150-180 us against
// torch's 70 (MKL), 0.28-0.39x at batch 4 and 8. Here each output is a dot product of two rows
// read in place: w is read once, straight from where it is, and x (a few KiB) stays in L1.
//
// A block of MR rows of x against NR rows of w keeps MR x NR sums of 16 lanes in registers; per
// 16 values of k it loads MR + NR vectors for MR x NR fused multiply-adds. AVX-512 takes 4 x 4
// blocks (16 accumulators), AVX2 2 x 2 (each 16-lane sum is two 8-float registers, so both copies
// add the same products into the same lanes: the same bits).
#include "cpu/gemm_nt.h"

#include <cstdint>

#include "core/parallel.h"
#include "cpu/isa.h"

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#define BM_GEMM_NT_KERNEL 1
#else
#define BM_GEMM_NT_KERNEL 0
#endif

namespace bm::cpu {
BM_ISA_DECLARE(bool gemm_nt_isa(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                                int64_t ldb, float* c, int64_t ldc))
}

namespace bm::cpu::BM_ISA_NS {

#if BM_GEMM_NT_KERNEL

namespace {

// 16 float lanes; lane l of a row's sum takes the row's elements kk with kk % 16 == l.
#if defined(__AVX512F__)
constexpr int kMR = 4, kNR = 4;
struct V16 {
  __m512 v;
};
inline V16 vzero() { return {_mm512_setzero_ps()}; }
inline V16 vload(const float* p) { return {_mm512_loadu_ps(p)}; }
inline V16 vload_n(const float* p, int n) { return {_mm512_maskz_loadu_ps(__mmask16((1u << n) - 1), p)}; }
inline V16 vfma(V16 x, V16 y, V16 acc) { return {_mm512_fmadd_ps(x.v, y.v, acc.v)}; }
// Lanes l + (l + 8): the first step of the sum's tree. (GCC 12 warns that the _mm256_undefined
// operand of _mm512_extractf32x8_ps "is used uninitialized" once this is inlined into the blocks: a
// false positive, its mask is all ones and the operand never read; as in reduce_rows.cpp.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
inline __m256 fold8(V16 x) { return _mm256_add_ps(_mm512_castps512_ps256(x.v), _mm512_extractf32x8_ps(x.v, 1)); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#else
constexpr int kMR = 2, kNR = 2;
struct V16 {
  __m256 lo, hi;
};
inline V16 vzero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
inline V16 vload(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
inline __m256i lanes_below(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline V16 vload_n(const float* p, int n) {
  return {_mm256_maskload_ps(p, lanes_below(n)), _mm256_maskload_ps(p + 8, lanes_below(n - 8))};
}
inline V16 vfma(V16 x, V16 y, V16 acc) {
  return {_mm256_fmadd_ps(x.lo, y.lo, acc.lo), _mm256_fmadd_ps(x.hi, y.hi, acc.hi)};
}
inline __m256 fold8(V16 x) { return _mm256_add_ps(x.lo, x.hi); }
#endif

// The 16 lanes' sum: (l + l+8), then (l + l+4), (l + l+2), (l + l+1), the same tree in both copies.
inline float hsum(V16 x) {
  const __m256 s8 = fold8(x);
  __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  s4 = _mm_add_ss(s4, _mm_shuffle_ps(s4, s4, 1));
  return _mm_cvtss_f32(s4);
}

// c[r][j] = a row r . b row j for r < MR, j < NR.
template <int MR, int NR>
void block(const float* a, int64_t lda, const float* b, int64_t ldb, int64_t k, float* c, int64_t ldc) {
  V16 acc[MR][NR];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) acc[r][j] = vzero();
  int64_t kk = 0;
  for (; kk + 16 <= k; kk += 16) {
    V16 x[MR];
    for (int r = 0; r < MR; ++r) x[r] = vload(a + r * lda + kk);
    for (int j = 0; j < NR; ++j) {
      const V16 w = vload(b + j * ldb + kk);
      for (int r = 0; r < MR; ++r) acc[r][j] = vfma(x[r], w, acc[r][j]);
    }
  }
  if (kk < k) {  // the last k % 16 values; the other lanes load zeros
    const int rem = int(k - kk);
    V16 x[MR];
    for (int r = 0; r < MR; ++r) x[r] = vload_n(a + r * lda + kk, rem);
    for (int j = 0; j < NR; ++j) {
      const V16 w = vload_n(b + j * ldb + kk, rem);
      for (int r = 0; r < MR; ++r) acc[r][j] = vfma(x[r], w, acc[r][j]);
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) c[r * ldc + j] = hsum(acc[r][j]);
}

using BlockFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float*, int64_t);

// kBlocks[mr - 1][nr - 1]: the block of mr rows of a and nr rows of b. (A plain array: a
// library template instantiated in an ISA copy could be picked up by other translation units.)
#if defined(__AVX512F__)
constexpr BlockFn kBlocks[kMR][kNR] = {{block<1, 1>, block<1, 2>, block<1, 3>, block<1, 4>},
                                       {block<2, 1>, block<2, 2>, block<2, 3>, block<2, 4>},
                                       {block<3, 1>, block<3, 2>, block<3, 3>, block<3, 4>},
                                       {block<4, 1>, block<4, 2>, block<4, 3>, block<4, 4>}};
#else
constexpr BlockFn kBlocks[kMR][kNR] = {{block<1, 1>, block<1, 2>}, {block<2, 1>, block<2, 2>}};
#endif

// Below this many multiply-adds the product runs on the calling thread.
constexpr double kSplitWork = 1 << 17;

}  // namespace

bool gemm_nt_isa(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                 int64_t ldc) {
  const int64_t nb = (n + kNR - 1) / kNR;
  const bool split = double(m) * double(n) * double(k) >= kSplitWork;
  // Threads take runs of w's rows: each reads its part of w once.
  parallel_for(0, nb, split ? 1 : nb, [&](int64_t b0, int64_t b1) {
    for (int64_t jb = b0; jb < b1; ++jb) {
      const int64_t j = jb * kNR, nr = n - j < kNR ? n - j : kNR;
      for (int64_t i = 0; i < m; i += kMR) {
        const int64_t mr = m - i < kMR ? m - i : kMR;
        kBlocks[mr - 1][nr - 1](a + i * lda, lda, b + j * ldb, ldb, k, c + i * ldc + j, ldc);
      }
    }
  });
  return true;
}

#else  // the baseline copy has no kernel: BLAS does these products

bool gemm_nt_isa(int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t) {
  return false;
}

#endif

}  // namespace bm::cpu::BM_ISA_NS

#if BM_ISA_IS_BASE  // the entry point, compiled once
namespace bm::cpu {

bool gemm_nt_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                 int64_t ldc) {
  if (m < 1 || m > kGemmNtRows || n < 1 || k < 1) return false;
  return BM_ISA_CALL(gemm_nt_isa, m, n, k, a, lda, b, ldb, c, ldc);
}

}  // namespace bm::cpu
#endif
