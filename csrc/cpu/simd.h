// 16-byte vectors through the GCC/Clang vector extension (SSE2 on x86-64, NEON on arm64), for the
// loops the auto-vectoriser leaves scalar: reductions whose combine is a compare-and-select, and
// pairwise sums whose leaf should end in vector adds, not 15 scalar ones.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace bm::cpu {

template <typename S, bool = std::is_arithmetic_v<S> && !std::is_same_v<S, bool>>
struct VecOf {
  using type = S;
  static constexpr int lanes = 1;
};
template <typename S>
struct VecOf<S, true> {
  typedef S type __attribute__((vector_size(16)));
  static constexpr int lanes = int(16 / sizeof(S));
};
template <typename S>
using vec_t = typename VecOf<S>::type;
template <typename S>
constexpr int kLanes = VecOf<S>::lanes;

template <typename S>
inline vec_t<S> vload(const void* p) {
  vec_t<S> v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
template <typename S>
inline void vstore(void* p, vec_t<S> v) {
  std::memcpy(p, &v, sizeof(v));
}
template <typename S>
inline vec_t<S> vsplat(S s) {
  vec_t<S> v;
  for (int l = 0; l < kLanes<S>; ++l) v[l] = s;
  return v;
}
// m ? b : a lane by lane, m a comparison result (all ones / all zeros per lane).
template <typename V, typename M>
inline V vselect(M m, V b, V a) {
  return (V)(((M)b & m) | ((M)a & ~m));
}
// Whether any lane of a comparison result is set.
template <typename M>
inline bool vany(M m) {
  uint64_t w[2];
  std::memcpy(w, &m, 16);
  return (w[0] | w[1]) != 0;
}

// NaN-propagating max / min, written once for scalars and vectors: the first NaN seen wins.
template <bool kMax>
struct Extreme {
  template <typename V>
  static V comb(V a, V b) {
    if constexpr (std::is_arithmetic_v<V>) {
      bool t = kMax ? (b > a) : (b < a);
      if constexpr (std::is_floating_point_v<V>) t = t || (b != b);
      return t ? b : a;
    } else {
      auto m = kMax ? (b > a) : (b < a);
      m = m | (b != b);
      return vselect(m, b, a);
    }
  }
};

}  // namespace bm::cpu
