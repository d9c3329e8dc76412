// The strided matmul used where no BLAS routine exists (float16, bfloat16, int32, int64) and for
// float32/float64 matrices too large for BLAS's 32-bit sizes. Cache-blocked; accumulates in float32
// for the half types (as torch's CPU kernels do) and in the integer type for ints, with unsigned
// arithmetic so an overflow wraps as it does in torch instead of being undefined behaviour.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "core/parallel.h"
#include "cpu/convert.h"

namespace bm::cpu {

// A matrix in memory: element (i, j) of a rows x cols matrix is at base[i * rs + j * cs].
template <typename T>
struct MatRef {
  T* base;
  int64_t rows, cols, rs, cs;
  T& at(int64_t i, int64_t j) const { return base[i * rs + j * cs]; }
};

template <typename T> struct mm_acc { using type = acc_t<T>; };
template <> struct mm_acc<int32_t> { using type = uint32_t; };
template <> struct mm_acc<int64_t> { using type = uint64_t; };
template <typename T> using mm_acc_t = typename mm_acc<T>::type;

namespace fallback {

// Blocks chosen so a KB x NB slice of packed B (128 KiB for 4-byte accumulators) stays in L2 and
// an MB x NB accumulator tile (32 KiB) in L1 while a row block streams through it.
constexpr int64_t kMB = 32, kNB = 256, kKB = 128;
constexpr int64_t kGrain = 32768;  // multiply-adds per parallel chunk before a second thread helps

// B converted once to the accumulator type, row-major K x N, so the inner loop is contiguous.
template <typename T>
void pack_b(const MatRef<const T>& b, std::vector<mm_acc_t<T>>& bp) {
  using Acc = mm_acc_t<T>;
  bp.resize(size_t(b.rows * b.cols));
  for (int64_t k = 0; k < b.rows; ++k)
    for (int64_t j = 0; j < b.cols; ++j) bp[size_t(k * b.cols + j)] = static_cast<Acc>(convert<acc_t<T>>(b.at(k, j)));
}

// Rows [r0, r1) of C = A @ Bpacked.
template <typename T>
void rows(const MatRef<const T>& a, const mm_acc_t<T>* bp, const MatRef<T>& c, int64_t r0, int64_t r1) {
  using Acc = mm_acc_t<T>;
  const int64_t K = a.cols, N = c.cols;
  std::vector<Acc> tile(size_t(kMB * std::min(N, kNB)));
  for (int64_t i0 = r0; i0 < r1; i0 += kMB) {
    const int64_t mb = std::min(kMB, r1 - i0);
    for (int64_t j0 = 0; j0 < N; j0 += kNB) {
      const int64_t nb = std::min(kNB, N - j0);
      std::fill(tile.begin(), tile.begin() + mb * nb, Acc(0));
      for (int64_t k0 = 0; k0 < K; k0 += kKB) {
        const int64_t kb = std::min(kKB, K - k0);
        for (int64_t i = 0; i < mb; ++i) {
          Acc* t = tile.data() + i * nb;
          for (int64_t k = k0; k < k0 + kb; ++k) {
            const Acc av = static_cast<Acc>(convert<acc_t<T>>(a.at(i0 + i, k)));
            const Acc* brow = bp + k * N + j0;
            for (int64_t j = 0; j < nb; ++j) t[j] += av * brow[j];
          }
        }
      }
      for (int64_t i = 0; i < mb; ++i)
        for (int64_t j = 0; j < nb; ++j)
          c.at(i0 + i, j0 + j) = convert<T>(static_cast<acc_t<T>>(tile[size_t(i * nb + j)]));
    }
  }
}

}  // namespace fallback

// C[b] = A[b] @ B[b] for b in [0, nbatch); mats(b) returns the three matrices of batch entry b.
// Many batch entries: one thread per run of entries. Few: rows of each product are split.
template <typename T, typename Mats>
void matmul_fallback(int64_t nbatch, int64_t M, int64_t N, int64_t K, Mats&& mats) {
  using Acc = mm_acc_t<T>;
  const int64_t work = std::max<int64_t>(1, M * N * K);
  if (nbatch >= 4 * int64_t(num_threads())) {
    parallel_for(0, nbatch, std::max<int64_t>(1, fallback::kGrain / work), [&](int64_t b0, int64_t b1) {
      std::vector<Acc> bp;
      const T* packed_from = nullptr;  // broadcast batches share one B: pack it once
      for (int64_t bi = b0; bi < b1; ++bi) {
        auto [a, b, c] = mats(bi);
        if (b.base != packed_from) { fallback::pack_b(b, bp); packed_from = b.base; }
        fallback::rows(a, bp.data(), c, 0, M);
      }
    });
    return;
  }
  std::vector<Acc> bp;
  const T* packed_from = nullptr;
  for (int64_t bi = 0; bi < nbatch; ++bi) {
    auto [a_, b, c_] = mats(bi);
    if (b.base != packed_from) { fallback::pack_b(b, bp); packed_from = b.base; }
    // Copies, not the bindings themselves: C++17 (clang) cannot capture structured bindings.
    auto a = a_;
    auto c = c_;
    parallel_for(0, M, std::max<int64_t>(1, fallback::kGrain / std::max<int64_t>(1, N * K)),
                 [&](int64_t r0, int64_t r1) { fallback::rows(a, bp.data(), c, r0, r1); });
  }
}

}  // namespace bm::cpu
