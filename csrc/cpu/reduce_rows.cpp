// The loops of reduce_rows.h. Compiled once per instruction set (bessemer_isa_variants in
// CMakeLists.txt).
#include "cpu/reduce_rows.h"

#include <cstdint>
#include <cstring>
#include <type_traits>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "cpu/isa.h"

namespace bm::cpu {
BM_ISA_DECLARE(float extreme_contig(const float* x, int64_t n, float id, bool is_max))
BM_ISA_DECLARE(void extreme_cols(float* acc, const float* x, int64_t w, bool is_max))
BM_ISA_DECLARE(float sum_contig(const float* x, int64_t n))
BM_ISA_DECLARE(void sum_short(const float* const* rows, int64_t n, float* out))
BM_ISA_DECLARE(void extreme_short(const float* const* rows, int64_t n, float id, bool is_max, float* out))
}

namespace bm::cpu::BM_ISA_NS {

namespace {

// The shape of tree_reduce_contig<float> (reduce_engine.h): leaves of kLeaf elements into kK
// accumulators (element i to accumulator i % kK), longer ranges halved at a multiple of kK, the
// accumulators joined pairwise at distance 16, 8, 4, 2, 1. Here they are kK / kL vectors of this
// copy's width (GCC/Clang vector extension: the auto-vectoriser leaves these loops scalar).
constexpr int kK = 32;
constexpr int64_t kLeaf = 256;
static_assert(kShortMax <= kLeaf, "a short row is one leaf: its accumulators, then the fold");
// The column loop asks for the line this far ahead (reduce_engine.h's kPrefetchBytes says why).
// The row loops (leaf_exact, scan) ask for nothing: a run read front to back is what the hardware
// prefetcher follows, and asking 16 KiB ahead as well made them slower (AMD Zen 4, rows of a
// (4096, 4096) float32 array, old and new builds alternated: sum 1 thread 2.2-2.3 -> 1.75 ms,
// amax 2.2 -> 2.05 ms; a 4 MiB array in L3, amax 90-97 -> 71 us).
constexpr int64_t kPrefetchBytes = 16384;
#if defined(__AVX512F__)
constexpr int kVB = 64;
#elif defined(__AVX2__)
constexpr int kVB = 32;
#else
constexpr int kVB = 16;  // SSE2, NEON
#endif
typedef float VF __attribute__((vector_size(kVB)));
constexpr int kL = kVB / 4, kNV = kK / kL;

inline VF ld(const float* p) {
  VF v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void st(float* p, VF v) { std::memcpy(p, &v, sizeof(v)); }
inline VF splat(float s) {  // one broadcast (GCC built the lane loop as 16 masked moves)
#if defined(__AVX512F__)
  return (VF)_mm512_set1_ps(s);
#elif defined(__AVX2__)
  return (VF)_mm256_set1_ps(s);
#elif defined(__SSE2__)
  return (VF)_mm_set1_ps(s);
#else
  VF v;
  for (int l = 0; l < kL; ++l) v[l] = s;
  return v;
#endif
}

// Extreme<kMax>::comb: b wins when it is larger (smaller) or NaN. For scalars and vectors.
template <bool kMax, typename V>
inline V pick(V a, V b) {
  return ((kMax ? b > a : b < a) | (b != b)) ? b : a;
}

// The two joins tree_reduce_contig runs here: Extreme<kMax>::comb (amax, amin) and + (sum, mean).
template <bool kMax_>
struct Pick {
  static constexpr bool kMax = kMax_;
  template <typename V>
  static V join(V a, V b) {
    return pick<kMax>(a, b);
  }
};
struct Plus {
  template <typename V>
  static V join(V a, V b) {
    return a + b;
  }
};
// Pick without its NaN test (one vector max or min), for values known to hold no NaN.
template <bool kMax>
struct PickNoNan {
  template <typename V>
  static V join(V a, V b) {
    return (kMax ? b > a : b < a) ? b : a;
  }
};
template <typename J>
struct NoNan {
  using type = J;
};
template <bool kMax>
struct NoNan<Pick<kMax>> {
  using type = PickNoNan<kMax>;
};

// (GCC 12 warns that the _mm512_undefined_* operand of _mm512_castps512_ps256 and
// _mm512_extractf32x8_ps "may be used uninitialized" once fold_lanes is inlined into loops with
// masked loads: a false positive, the masks are all ones and the operand never read.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// A vector's lanes joined pairwise at distance kL / 2, ..., 2, 1, lane k with lane k + d, the
// lower first (tree_reduce_contig's order). On x86 in registers, the halves of the register joined
// as vectors (J::join works on __m256 / __m128 through the vector extension): through a stored
// array the 15 scalar joins of a 16-lane fold cost a quarter of a leaf of 256.
template <typename J>
float fold_lanes(VF a) {
#if defined(__SSE2__)
#if defined(__AVX512F__)
  const __m512 v = (__m512)a;
  const __m256 h = J::join(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  __m128 q = J::join(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
#elif defined(__AVX2__)
  const __m256 h = (__m256)a;
  __m128 q = J::join(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
#else
  __m128 q = (__m128)a;
#endif
  q = J::join(q, _mm_movehl_ps(q, q));
  q = J::join(q, _mm_shuffle_ps(q, q, 1));
  return _mm_cvtss_f32(q);
#else
  float s[kL];
  st(s, a);
  for (int w = kL / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) s[k] = J::join(s[k], s[k + w]);
  return s[0];
#endif
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// The accumulators joined pairwise at distance kNV / 2, ..., 1 (whole vectors), then the lanes.
template <typename J>
[[gnu::always_inline]] inline VF join_vectors(VF* a) {
  for (int w = kNV / 2; w >= 1; w /= 2)
    for (int v = 0; v < w; ++v) a[v] = J::join(a[v], a[v + w]);
  return a[0];
}
template <typename J>
float fold(VF* a) {
  return fold_lanes<J>(join_vectors<J>(a));
}

// Vector v of a leaf's last, partial group of kK elements (cnt = n - i of them left), the
// missing lanes holding the identity, as tree_reduce_contig pads them. Masked loads on AVX2 and
// AVX-512 (they touch no memory past the run): the scalar copy into a padded array cost more than
// the rest of a short row's sum ((1M, 8) rows: most of the time).
[[gnu::always_inline]] inline VF ld_tail(const float* x, int64_t cnt, int v, float id) {
  const int64_t k = cnt - int64_t(v) * kL;  // lanes of vector v that hold data
  if (k >= kL) return ld(x + v * kL);
  if (k <= 0) return splat(id);
#if defined(__AVX512F__)
  return (VF)_mm512_mask_loadu_ps(_mm512_set1_ps(id), __mmask16((1u << k) - 1), x + v * kL);
#elif defined(__AVX2__)
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256 keep = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(int(k)), lane));
  return (VF)_mm256_blendv_ps(_mm256_set1_ps(id), _mm256_maskload_ps(x + v * kL, _mm256_castps_si256(keep)), keep);
#else
  VF r = splat(id);
  for (int64_t l = 0; l < k; ++l) r[l] = x[v * kL + l];
  return r;
#endif
}

// A leaf's accumulators: kNV vectors from the identity taking x[0 .. n) kK at a time, the last
// partial group padded with the identity. Forced inline (scan_into too): as a call per short row
// (its vectors through memory) the batched rows ran 2-5x slower.
template <typename J>
[[gnu::always_inline]] inline void accumulate(const float* x, int64_t n, float id, VF* a) {
  for (int v = 0; v < kNV; ++v) a[v] = splat(id);
  int64_t i = 0;
  for (; i + kK <= n; i += kK)
    for (int v = 0; v < kNV; ++v) a[v] = J::join(a[v], ld(x + i + v * kL));
  if (i < n)
    for (int v = 0; v < kNV; ++v) a[v] = J::join(a[v], ld_tail(x + i, n - i, v, id));
}

template <typename J>
float leaf_exact(const float* x, int64_t n, float id) {
  VF a[kNV];
  accumulate<J>(x, n, id, a);
  return fold<J>(a);
}

// Whether any lane of v is a NaN: one compare-to-mask, where a loop over the stored lanes cost
// more than a short row's scan ((1M, 8) amax rows: 44 ns a row on an Intel Xeon, torch 8).
inline bool any_nan(VF v) {
#if defined(__AVX512F__)
  return _mm512_cmp_ps_mask((__m512)v, (__m512)v, _CMP_UNORD_Q) != 0;
#elif defined(__AVX2__)
  return _mm256_movemask_ps(_mm256_cmp_ps((__m256)v, (__m256)v, _CMP_UNORD_Q)) != 0;
#elif defined(__SSE2__)
  return _mm_movemask_ps(_mm_cmpunord_ps((__m128)v, (__m128)v)) != 0;
#else
  bool any = false;
  for (int l = 0; l < kL; ++l) any |= v[l] != v[l];
  return any;
#endif
}

// Without NaNs pick(a, b) is b > a ? b : a, one vector max instruction; NaNs are only recorded
// (nan holds one once one is seen) and dealt with by the callers.
template <bool kMax>
[[gnu::always_inline]] inline void scan_into(const float* x, int64_t n, float id, VF* a, VF& nan) {
  for (int v = 0; v < kNV; ++v) a[v] = splat(id);
  int64_t i = 0;
  for (; i + kK <= n; i += kK) {
    for (int v = 0; v < kNV; ++v) {
      const VF b = ld(x + i + v * kL);
      a[v] = (kMax ? b > a[v] : b < a[v]) ? b : a[v];
      nan = (b != b) ? b : nan;
    }
  }
  if (i < n) {
    for (int v = 0; v < kNV; ++v) {
      const VF b = ld_tail(x + i, n - i, v, id);
      a[v] = (kMax ? b > a[v] : b < a[v]) ? b : a[v];
      nan = (b != b) ? b : nan;
    }
  }
}
// The same, answering whether a NaN was seen (the id included).
template <bool kMax>
bool scan(const float* x, int64_t n, float id, VF* a) {
  VF nan = splat(0.0f);
  scan_into<kMax>(x, n, id, a, nan);
  return id != id || any_nan(nan);
}

// amax / amin scan a leaf with one vector max (min) per vector, and do a leaf holding a NaN again
// exactly (which NaN wins depends on the order).
template <typename J>
float leaf(const float* x, int64_t n, float id) {
  if constexpr (std::is_same_v<J, Plus>) {
    return leaf_exact<J>(x, n, id);
  } else {
    VF a[kNV];
    return scan<J::kMax>(x, n, id, a) ? leaf_exact<J>(x, n, id) : fold<J>(a);
  }
}

template <typename J>
float tree(const float* x, int64_t n, float id) {
  if (n > kLeaf) {
    const int64_t h = (n / 2) & ~int64_t(kK - 1);
    const float left = tree<J>(x, h, id);
    return J::join(left, tree<J>(x + h, n - h, id));
  }
  return leaf<J>(x, n, id);
}

// Without NaNs, and unless the extreme is a zero (whose sign the order of the comparisons
// decides), the extreme does not depend on the order: equal nonzero floats have equal bits. So one
// pass of vector max (min) over the whole run, without tree()'s fold and NaN check per leaf of 256,
// which at 16 lanes cost as much as the leaf itself; a run holding a NaN, or whose extreme is a
// zero, is done again in tree_reduce_contig's order.
template <bool kMax>
float flat(const float* x, int64_t n, float id) {
  VF a[kNV];
  if (scan<kMax>(x, n, id, a)) return tree<Pick<kMax>>(x, n, id);
  const float r = fold<Pick<kMax>>(a);  // NaN-free: the fold in registers
  return r == 0.0f ? tree<Pick<kMax>>(x, n, id) : r;
}

template <bool kMax>
void cols(float* acc, const float* x, int64_t w) {
  int64_t j = 0;
  for (; j + 16 <= w; j += 16) {  // a cache line at a time, asking for the one kPrefetchBytes ahead
    __builtin_prefetch(reinterpret_cast<const char*>(x + j) + kPrefetchBytes);
    for (int u = 0; u < 16; u += kL) st(acc + j + u, pick<kMax>(ld(acc + j + u), ld(x + j + u)));
  }
  for (; j < w; ++j) acc[j] = pick<kMax>(acc[j], x[j]);
}

#if defined(__AVX512F__) || defined(__AVX2__)
// Short rows (reduce_rows.h), kL rows at a time: each row's leaf accumulators joined into one vector
// (accumulate, join_vectors: the leaf's own operations), then a butterfly that joins lane j with
// lane j + kL / 2, ..., + 1 of the kL rows at once, the lower lane first as fold_lanes does: the same
// operations on the same operands as the row-by-row fold. res[r] = row r's result.
template <int kImm>
inline __m256 shuffle(__m256 a, __m256 b) { return _mm256_shuffle_ps(a, b, kImm); }
#if defined(__AVX512F__)
template <int kImm>
inline __m512 shuffle(__m512 a, __m512 b) { return _mm512_shuffle_ps(a, b, kImm); }
#endif

// The butterfly's last two levels, within each 128-bit chunk, for either width: on entry
// u[0 .. 4) hold kC = kL / 4 chunks each, the levels across chunks done; lane j joined with lane
// j + 2, then + 1, and res[c + kC q] = row c + kC q's result (it comes out in lane 4 c + q).
template <typename J, typename V>
void chunk_levels(const V* u, float* res) {
  constexpr int kC = int(sizeof(V) / 16);
  V w[2];
  for (int k = 0; k < 2; ++k)  // + 2
    w[k] = J::join(shuffle<0x44>(u[2 * k], u[2 * k + 1]), shuffle<0xEE>(u[2 * k], u[2 * k + 1]));
  const V r = J::join(shuffle<0x88>(w[0], w[1]), shuffle<0xDD>(w[0], w[1]));  // + 1
  float lanes[4 * kC];
  std::memcpy(lanes, &r, sizeof(r));
  for (int c = 0; c < kC; ++c)
    for (int q = 0; q < 4; ++q) res[c + kC * q] = lanes[4 * c + q];
}

#if defined(__AVX512F__)
// _mm512_shuffle_f32x4 with an all-ones zero mask: the same instruction, without the
// _mm512_undefined_ps operand GCC 12 warns about.
template <int kImm>
inline __m512 chunks(__m512 a, __m512 b) { return _mm512_maskz_shuffle_f32x4(__mmask16(0xFFFF), a, b, kImm); }

template <typename J>
void butterfly(const VF* s, float* res) {
  __m512 t[8], u[4];
  for (int k = 0; k < 8; ++k) {  // + 8: rows 2k, 2k + 1 in the two halves
    const __m512 a = (__m512)s[2 * k], b = (__m512)s[2 * k + 1];
    t[k] = J::join(chunks<0x44>(a, b), chunks<0xEE>(a, b));
  }
  for (int k = 0; k < 4; ++k)  // + 4: rows 4k .. 4k + 3 in the four 128-bit chunks
    u[k] = J::join(chunks<0x88>(t[2 * k], t[2 * k + 1]), chunks<0xDD>(t[2 * k], t[2 * k + 1]));
  chunk_levels<J>(u, res);
}
#else
template <typename J>
void butterfly(const VF* s, float* res) {
  __m256 t[4];
  for (int k = 0; k < 4; ++k) {  // + 4: rows 2k, 2k + 1 in the two halves
    const __m256 a = (__m256)s[2 * k], b = (__m256)s[2 * k + 1];
    t[k] = J::join(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
  }
  chunk_levels<J>(t, res);
}
#endif

// amax / amin: the rows are scanned as flat() scans them, and the butterfly's order is free
// without NaNs and with a nonzero result; otherwise the batch is done again row by row.
template <typename J>
void short_rows(const float* const* rows, int64_t n, float id, float* out) {
  // The joins after the scans need no NaN test: a batch that saw a NaN is done again.
  using B = typename NoNan<J>::type;
  VF nan = splat(0.0f);
  for (int g = 0; g < kShortRows; g += kL) {
    VF s[kL];
    for (int r = 0; r < kL; ++r) {
      VF a[kNV];
      if constexpr (std::is_same_v<J, Plus>) accumulate<J>(rows[g + r], n, id, a);
      else scan_into<J::kMax>(rows[g + r], n, id, a, nan);  // one vector max a load, NaNs recorded
      s[r] = join_vectors<B>(a);
    }
    butterfly<B>(s, out + g);
  }
  if constexpr (!std::is_same_v<J, Plus>) {
    bool redo = id != id || any_nan(nan);
    for (int r = 0; r < kShortRows; ++r) redo |= out[r] == 0.0f;  // a zero's sign depends on the order
    if (redo)
      for (int r = 0; r < kShortRows; ++r) out[r] = flat<J::kMax>(rows[r], n, id);
  }
}
#else
// No butterfly in this copy (baseline x86-64, NEON): row by row.
template <typename J>
void short_rows(const float* const* rows, int64_t n, float id, float* out) {
  for (int r = 0; r < kShortRows; ++r) {
    if constexpr (std::is_same_v<J, Plus>) out[r] = tree<Plus>(rows[r], n, id);
    else out[r] = flat<J::kMax>(rows[r], n, id);
  }
}
#endif

}  // namespace

float sum_contig(const float* x, int64_t n) { return tree<Plus>(x, n, 0.0f); }

void sum_short(const float* const* rows, int64_t n, float* out) { short_rows<Plus>(rows, n, 0.0f, out); }

void extreme_short(const float* const* rows, int64_t n, float id, bool is_max, float* out) {
  if (is_max) short_rows<Pick<true>>(rows, n, id, out);
  else short_rows<Pick<false>>(rows, n, id, out);
}

float extreme_contig(const float* x, int64_t n, float id, bool is_max) {
  return is_max ? flat<true>(x, n, id) : flat<false>(x, n, id);
}

void extreme_cols(float* acc, const float* x, int64_t w, bool is_max) {
  if (is_max) cols<true>(acc, x, w);
  else cols<false>(acc, x, w);
}

}  // namespace bm::cpu::BM_ISA_NS

#if BM_ISA_IS_BASE  // the entry points, compiled once
namespace bm::cpu {
float extreme_contig_f32(const float* x, int64_t n, float id, bool is_max) {
  return BM_ISA_CALL(extreme_contig, x, n, id, is_max);
}
void extreme_cols_f32(float* acc, const float* x, int64_t w, bool is_max) {
  BM_ISA_CALL(extreme_cols, acc, x, w, is_max);
}
float sum_contig_f32(const float* x, int64_t n) { return BM_ISA_CALL(sum_contig, x, n); }
void sum_short_rows_f32(const float* const* rows, int64_t n, float* out) { BM_ISA_CALL(sum_short, rows, n, out); }
void extreme_short_rows_f32(const float* const* rows, int64_t n, float id, bool is_max, float* out) {
  BM_ISA_CALL(extreme_short, rows, n, id, is_max, out);
}
}  // namespace bm::cpu
#endif
