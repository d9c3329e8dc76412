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

// GCC 12 warns that the _mm512_undefined_* operand inside its _mm512_castps512_ps256, max_ps and
// min_ps "is (may be) used uninitialized" once they are inlined into loops with masked loads: a
// false positive (the masks are all ones, the undefined operand never read).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace bm::cpu {
BM_ISA_DECLARE(float extreme_contig(const float* x, int64_t n, float id, bool is_max))
BM_ISA_DECLARE(void extreme_cols(float* acc, const float* x, int64_t w, bool is_max))
BM_ISA_DECLARE(float sum_contig(const float* x, int64_t n))
BM_ISA_DECLARE(bool sum_short(const float* const* rows, int64_t n, float* out))
BM_ISA_DECLARE(bool extreme_short(const float* const* rows, int64_t n, float id, bool is_max, float* out))
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
inline VF splat(float s) {
  VF v;
  for (int l = 0; l < kL; ++l) v[l] = s;
  return v;
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

// A vector's lanes joined pairwise at distance kL / 2, ..., 2, 1.
template <typename J>
float fold_lanes(VF a) {
  float s[kL];
  st(s, a);
  for (int w = kL / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) s[k] = J::join(s[k], s[k + w]);
  return s[0];
}

// The sum's lanes in registers, the same adds in the same order (through the stored array, the 15
// scalar adds of a 16-lane fold cost a quarter of a leaf of 256).
template <>
float fold_lanes<Plus>(VF a) {
#if defined(__AVX512F__)
  const __m512 v = (__m512)a;
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
  __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
#elif defined(__AVX2__)
  const __m256 h = (__m256)a;
  __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
#elif defined(__SSE2__)
  __m128 q = (__m128)a;
#endif
#if defined(__SSE2__)
  q = _mm_add_ps(q, _mm_movehl_ps(q, q));
  q = _mm_add_ss(q, _mm_shuffle_ps(q, q, 1));
  return _mm_cvtss_f32(q);
#else
  float s[kL];
  st(s, a);
  for (int w = kL / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) s[k] = s[k] + s[k + w];
  return s[0];
#endif
}

template <typename J>
float fold(VF* a) {
  for (int w = kNV / 2; w >= 1; w /= 2)
    for (int v = 0; v < w; ++v) a[v] = J::join(a[v], a[v + w]);
  return fold_lanes<J>(a[0]);
}

// Vector v of a leaf's last, partial group of kK elements (cnt = n - i of them left), the
// missing lanes holding the identity, as tree_reduce_contig pads them. Masked loads on AVX2 and
// AVX-512 (they touch no memory past the run): the scalar copy into a padded array cost more than
// the rest of a short row's sum ((1M, 8) rows: most of the time).
inline VF ld_tail(const float* x, int64_t cnt, int v, float id) {
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

template <typename J>
float leaf_exact(const float* x, int64_t n, float id) {
  VF a[kNV];
  for (int v = 0; v < kNV; ++v) a[v] = splat(id);
  int64_t i = 0;
  for (; i + kK <= n; i += kK)
    for (int v = 0; v < kNV; ++v) a[v] = J::join(a[v], ld(x + i + v * kL));
  if (i < n)
    for (int v = 0; v < kNV; ++v) a[v] = J::join(a[v], ld_tail(x + i, n - i, v, id));
  return fold<J>(a);
}

// Whether any lane of v is a NaN, and the largest (smallest) lane of a NaN-free v in any order: one
// compare-to-mask or a few shuffles, where a loop over the stored lanes cost more than a short
// row's scan ((1M, 8) amax rows: 44 ns a row on an Intel Xeon, torch 8).
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

template <bool kMax>
float lanes_extreme(VF v) {
#if defined(__SSE2__)
  auto join = [](__m128 a, __m128 b) { return kMax ? _mm_max_ps(a, b) : _mm_min_ps(a, b); };
#if defined(__AVX512F__)
  const __m512 w = (__m512)v;
  const __m256 lo = _mm512_castps512_ps256(w), hi = _mm512_extractf32x8_ps(w, 1);
  const __m256 h = kMax ? _mm256_max_ps(lo, hi) : _mm256_min_ps(lo, hi);
  __m128 q = join(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
#elif defined(__AVX2__)
  const __m256 h = (__m256)v;
  __m128 q = join(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
#else
  __m128 q = (__m128)v;
#endif
  q = join(q, _mm_movehl_ps(q, q));
  q = join(q, _mm_shuffle_ps(q, q, 1));
  return _mm_cvtss_f32(q);
#else
  float r = v[0];
  for (int l = 1; l < kL; ++l) r = pick<kMax>(r, v[l]);
  return r;
#endif
}

// Without NaNs pick(a, b) is b > a ? b : a, one vector max instruction; NaNs are only counted
// (the result: whether any was seen, the id included) and dealt with by the callers.
template <bool kMax>
bool scan(const float* x, int64_t n, float id, VF* a) {
  VF nan = splat(0.0f);
  for (int v = 0; v < kNV; ++v) a[v] = splat(id);
  int64_t i = 0;
  for (; i + kK <= n; i += kK) {
    for (int v = 0; v < kNV; ++v) {
      const VF b = ld(x + i + v * kL);
      a[v] = (kMax ? b > a[v] : b < a[v]) ? b : a[v];
      nan = (b != b) ? b : nan;  // keeps a NaN once one is seen
    }
  }
  if (i < n) {
    for (int v = 0; v < kNV; ++v) {
      const VF b = ld_tail(x + i, n - i, v, id);
      a[v] = (kMax ? b > a[v] : b < a[v]) ? b : a[v];
      nan = (b != b) ? b : nan;
    }
  }
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
  for (int v = 1; v < kNV; ++v) a[0] = pick<kMax>(a[0], a[v]);
  const float r = lanes_extreme<kMax>(a[0]);
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

#if defined(__AVX512F__)
// Short rows (reduce_rows.h): row r's leaf accumulators (two vectors, the last group padded with
// the identity) joined at distance 16, then the 16 rows' vectors through a butterfly whose every
// level pairs lane j with lane j + d of the same row (d = 8, 4, 2, 1), the lower lane first as
// fold_lanes has it: the same operations on the same operands as the row-by-row fold. The results
// come out in lane 4 j + q for row j + 4 q.

// _mm512_shuffle_f32x4 with an all-ones zero mask: the same instruction, without the
// _mm512_undefined_ps operand GCC 12 warns about.
template <int kImm>
inline __m512 chunks(__m512 a, __m512 b) { return _mm512_maskz_shuffle_f32x4(__mmask16(0xFFFF), a, b, kImm); }

template <typename J>
struct Short {
  static __m512 join(__m512 a, __m512 b) {
    if constexpr (std::is_same_v<J, Plus>) return _mm512_add_ps(a, b);
    else if constexpr (J::kMax) return _mm512_max_ps(b, a);  // NaN-free here: any order
    else return _mm512_min_ps(b, a);
  }
  // The rows' slot vectors s[0..16) folded; res[r] = row r's result.
  static void butterfly(__m512* s, float* res) {
    __m512 t[8], u[4], w[2];
    for (int k = 0; k < 8; ++k)  // lanes 0-7 + lanes 8-15: rows 2k, 2k + 1 in the two halves
      t[k] = join(chunks<0x44>(s[2 * k], s[2 * k + 1]), chunks<0xEE>(s[2 * k], s[2 * k + 1]));
    for (int k = 0; k < 4; ++k)  // + 4: rows 4k .. 4k + 3 in the four 128-bit chunks
      u[k] = join(chunks<0x88>(t[2 * k], t[2 * k + 1]), chunks<0xDD>(t[2 * k], t[2 * k + 1]));
    for (int k = 0; k < 2; ++k)  // + 2: chunk j holds rows 8k + j and 8k + 4 + j
      w[k] = join(_mm512_shuffle_ps(u[2 * k], u[2 * k + 1], 0x44), _mm512_shuffle_ps(u[2 * k], u[2 * k + 1], 0xEE));
    const __m512 r = join(_mm512_shuffle_ps(w[0], w[1], 0x88), _mm512_shuffle_ps(w[0], w[1], 0xDD));  // + 1
    float lanes[16];
    _mm512_storeu_ps(lanes, r);
    for (int j = 0; j < 4; ++j)
      for (int q = 0; q < 4; ++q) res[j + 4 * q] = lanes[4 * j + q];
  }
  static __m512 half(const float* x, int64_t k, float id) {  // k of 16 lanes from x, the rest id
    if (k >= 16) return _mm512_loadu_ps(x);
    const __m512 idv = _mm512_set1_ps(id);
    return k <= 0 ? idv : _mm512_mask_loadu_ps(idv, __mmask16((1u << k) - 1), x);
  }
  // A row of n <= kLeaf as leaf_exact has it: two accumulators from the identity taking the row 32
  // at a time (the last group padded), joined at distance 16. `nan` collects NaN lanes (extremes).
  static __m512 slots(const float* x, int64_t n, float id, __mmask16* nan) {
    __m512 a0 = _mm512_set1_ps(id), a1 = a0;
    for (int64_t i = 0; i < n; i += 32) {
      const __m512 v0 = half(x + i, n - i, id), v1 = half(x + i + 16, n - i - 16, id);
      if constexpr (!std::is_same_v<J, Plus>)
        *nan |= _mm512_cmp_ps_mask(v0, v0, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(v1, v1, _CMP_UNORD_Q);
      a0 = join(a0, v0), a1 = join(a1, v1);
    }
    return join(a0, a1);
  }
};

bool sum_short_rows(const float* const* rows, int64_t n, float* out) {
  __m512 s[16];
  __mmask16 unused = 0;
  for (int r = 0; r < 16; ++r) s[r] = Short<Plus>::slots(rows[r], n, 0.0f, &unused);
  Short<Plus>::butterfly(s, out);
  return true;
}

template <bool kMax>
void extreme_short_rows(const float* const* rows, int64_t n, float id, float* out) {
  __m512 s[16];
  __mmask16 nan = 0;
  for (int r = 0; r < 16; ++r) s[r] = Short<Pick<kMax>>::slots(rows[r], n, id, &nan);
  bool redo = nan != 0 || id != id;
  if (!redo) {
    Short<Pick<kMax>>::butterfly(s, out);
    for (int r = 0; r < 16; ++r) redo |= out[r] == 0.0f;  // a zero's sign depends on the order
  }
  if (redo)
    for (int r = 0; r < 16; ++r) out[r] = flat<kMax>(rows[r], n, id);
}
#elif defined(__AVX2__)
// The same for 8-lane vectors, 8 rows at a time: a row's four leaf accumulators joined at
// distance 16 and 8 (fold's order), then lanes j + 4, + 2, + 1 through the butterfly; row c + 2 q
// comes out in lane 4 c + q.
template <typename J>
struct Short {
  static __m256 join(__m256 a, __m256 b) {
    if constexpr (std::is_same_v<J, Plus>) return _mm256_add_ps(a, b);
    else if constexpr (J::kMax) return _mm256_max_ps(b, a);  // NaN-free here: any order
    else return _mm256_min_ps(b, a);
  }
  static void butterfly(const __m256* s, float* res) {
    __m256 t[4], u[2];
    for (int k = 0; k < 4; ++k)
      t[k] = join(_mm256_permute2f128_ps(s[2 * k], s[2 * k + 1], 0x20),
                  _mm256_permute2f128_ps(s[2 * k], s[2 * k + 1], 0x31));
    for (int k = 0; k < 2; ++k)
      u[k] = join(_mm256_shuffle_ps(t[2 * k], t[2 * k + 1], 0x44), _mm256_shuffle_ps(t[2 * k], t[2 * k + 1], 0xEE));
    const __m256 r = join(_mm256_shuffle_ps(u[0], u[1], 0x88), _mm256_shuffle_ps(u[0], u[1], 0xDD));
    float lanes[8];
    _mm256_storeu_ps(lanes, r);
    for (int c = 0; c < 2; ++c)
      for (int q = 0; q < 4; ++q) res[c + 2 * q] = lanes[4 * c + q];
  }
  // A row of n <= kLeaf as leaf_exact has it: four accumulators from the identity taking the row
  // 32 at a time, joined at distance 16 then 8; `nan` collects NaN lanes (extremes).
  static __m256 slots(const float* x, int64_t n, float id, __m256* nan) {
    __m256 a[4];
    for (int k = 0; k < 4; ++k) a[k] = _mm256_set1_ps(id);
    for (int64_t i = 0; i < n; i += 32)
      for (int k = 0; k < 4; ++k) {
        const __m256 v = (__m256)ld_tail(x + i + 8 * k, n - i - 8 * k, 0, id);
        if constexpr (!std::is_same_v<J, Plus>) *nan = _mm256_or_ps(*nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        a[k] = join(a[k], v);
      }
    return join(join(a[0], a[2]), join(a[1], a[3]));
  }
};

bool sum_short_rows(const float* const* rows, int64_t n, float* out) {
  __m256 s[8], nan = _mm256_setzero_ps();
  for (int g = 0; g < 2; ++g) {
    for (int r = 0; r < 8; ++r) s[r] = Short<Plus>::slots(rows[8 * g + r], n, 0.0f, &nan);
    Short<Plus>::butterfly(s, out + 8 * g);
  }
  return true;
}

template <bool kMax>
void extreme_short_rows(const float* const* rows, int64_t n, float id, float* out) {
  __m256 s[8], nan = _mm256_setzero_ps();
  bool redo = id != id;
  for (int g = 0; g < 2 && !redo; ++g) {
    for (int r = 0; r < 8; ++r) s[r] = Short<Pick<kMax>>::slots(rows[8 * g + r], n, id, &nan);
    Short<Pick<kMax>>::butterfly(s, out + 8 * g);
  }
  redo = redo || _mm256_movemask_ps(nan) != 0;
  for (int r = 0; r < 16 && !redo; ++r) redo = out[r] == 0.0f;  // a zero's sign depends on the order
  if (redo)
    for (int r = 0; r < 16; ++r) out[r] = flat<kMax>(rows[r], n, id);
}
#endif

}  // namespace

float sum_contig(const float* x, int64_t n) { return tree<Plus>(x, n, 0.0f); }

bool sum_short(const float* const* rows, int64_t n, float* out) {
#if defined(__AVX512F__) || defined(__AVX2__)
  return sum_short_rows(rows, n, out);
#else
  (void)rows, (void)n, (void)out;
  return false;
#endif
}

bool extreme_short(const float* const* rows, int64_t n, float id, bool is_max, float* out) {
#if defined(__AVX512F__) || defined(__AVX2__)
  if (is_max) extreme_short_rows<true>(rows, n, id, out);
  else extreme_short_rows<false>(rows, n, id, out);
  return true;
#else
  (void)rows, (void)n, (void)id, (void)is_max, (void)out;
  return false;
#endif
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
bool sum_short_rows_f32(const float* const* rows, int64_t n, float* out) {
  return BM_ISA_CALL(sum_short, rows, n, out);
}
bool extreme_short_rows_f32(const float* const* rows, int64_t n, float id, bool is_max, float* out) {
  return BM_ISA_CALL(extreme_short, rows, n, id, is_max, out);
}
}  // namespace bm::cpu
#endif
