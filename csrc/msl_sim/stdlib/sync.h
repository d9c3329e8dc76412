// Barriers and SIMD-group functions for the simulator (SIMD width 32).
// Each call hands the lane's value to the dispatcher and blocks (the lane is a fiber) until every
// active lane of its simdgroup has arrived at the same call; then one combine function computes
// all lanes' results. Active lanes are the ones that exist and have not returned. Reading a lane
// that is inactive yields a poison value (all bits set: NaN for floats) because a GPU would hand
// back an undefined register; a shuffle past the simdgroup edge returns the caller's own value.
// Every call records its source line (__builtin_FILE/LINE of the caller) for error messages.
#pragma once
#include <cstdint>
#include <type_traits>

#include "msl_sim/abi.h"
#include "msl_sim/stdlib/math.h"
#include "msl_sim/stdlib/vec.h"

#define BM_MSL_SITE const char *bm_file = __builtin_FILE(), int bm_line = __builtin_LINE()

namespace metal {

enum class mem_flags : uint32_t {
  mem_none = 0,
  mem_device = 1,
  mem_threadgroup = 2,
  mem_texture = 4,
  mem_threadgroup_imageblock = 8,
};
constexpr mem_flags operator|(mem_flags a, mem_flags b) { return mem_flags(uint32_t(a) | uint32_t(b)); }

inline void threadgroup_barrier(mem_flags f, BM_MSL_SITE) {
  bm::msl::threadgroup_barrier_wait(uint32_t(f), bm_file, bm_line);
}

using vote_t = ulong;
struct simd_vote {
  vote_t v = 0;
  constexpr explicit operator vote_t() const { return v; }
  constexpr bool all() const { return v == 0xffffffffull; }
  constexpr bool any() const { return v != 0; }
};

namespace detail {

using bm::msl::SimdLane;
constexpr int W = int(bm::msl::kSimdWidth);

// The value type of an argument (a swizzle_ref collapses to its vector).
template <class T, class = void> struct value_of { using type = T; };
template <class T>
struct value_of<T, std::enable_if_t<is_vec_v<T>>> { using type = vec<typename T::value_type, T::size>; };
template <class T> using value_t = typename value_of<std::decay_t<T>>::type;

template <class T, class = void> struct elem { using type = T; };
template <class T> struct elem<T, std::enable_if_t<is_vec_v<T>>> { using type = typename T::value_type; };

template <class T>
T poison() {
  if constexpr (std::is_same_v<typename elem<T>::type, bool>) {
    return T(true);  // any other byte is not a valid bool
  } else {
    T t;
    __builtin_memset(static_cast<void*>(&t), 0xff, sizeof(T));
    return t;
  }
}
template <class T> const T& in(const SimdLane& l) { return *static_cast<const T*>(l.in); }
template <class T> void out(SimdLane& l, const T& v) { *static_cast<T*>(l.out) = v; }

inline void c_nop(SimdLane*) {}

// Reductions over active lanes: a pairwise tree in lane order (deterministic).
template <class T, class Op>
void reduce(SimdLane* l, Op op) {
  T v[W];
  int n = 0;
  for (int i = 0; i < W; ++i)
    if (l[i].in) v[n++] = in<T>(l[i]);
  for (int s = 1; s < n; s *= 2)
    for (int i = 0; i + s < n; i += 2 * s) v[i] = T(op(v[i], v[i + s]));
  for (int i = 0; i < W; ++i)
    if (l[i].in) out(l[i], v[0]);
}
template <class T> void c_sum(SimdLane* l) { reduce<T>(l, [](const T& a, const T& b) { return a + b; }); }
template <class T> void c_product(SimdLane* l) { reduce<T>(l, [](const T& a, const T& b) { return a * b; }); }
template <class T> void c_min(SimdLane* l) { reduce<T>(l, [](const T& a, const T& b) { return min(a, b); }); }
template <class T> void c_max(SimdLane* l) { reduce<T>(l, [](const T& a, const T& b) { return max(a, b); }); }
template <class T> void c_and(SimdLane* l) { reduce<T>(l, [](const T& a, const T& b) { return a & b; }); }
template <class T> void c_or(SimdLane* l) { reduce<T>(l, [](const T& a, const T& b) { return a | b; }); }
template <class T> void c_xor(SimdLane* l) { reduce<T>(l, [](const T& a, const T& b) { return a ^ b; }); }

// Scans over active lanes in lane order.
template <class T, bool Inclusive, bool Product>
void c_scan(SimdLane* l) {
  T acc = T(Product ? 1 : 0);
  for (int i = 0; i < W; ++i) {
    if (!l[i].in) continue;
    T x = in<T>(l[i]);
    if (Inclusive) acc = T(Product ? acc * x : acc + x);
    out(l[i], acc);
    if (!Inclusive) acc = T(Product ? acc * x : acc + x);
  }
}

// Data movement. `src(i, arg)` names the lane lane i reads, or -1 for "keep own value".
template <class T, class Src>
void move(SimdLane* l, Src src) {
  for (int i = 0; i < W; ++i) {
    if (!l[i].in) continue;
    int s = src(i, l[i].arg);
    if (s < 0) out(l[i], in<T>(l[i]));
    else if (s >= W || !l[s].in) out(l[i], poison<T>());
    else out(l[i], in<T>(l[s]));
  }
}
template <class T> void c_shuffle(SimdLane* l) { move<T>(l, [](int, uint32_t a) { return int(a); }); }
template <class T> void c_down(SimdLane* l) {
  move<T>(l, [](int i, uint32_t d) { return i + int(d) >= W ? -1 : i + int(d); });
}
template <class T> void c_up(SimdLane* l) {
  move<T>(l, [](int i, uint32_t d) { return i - int(d) < 0 ? -1 : i - int(d); });
}
template <class T> void c_xor_lane(SimdLane* l) { move<T>(l, [](int i, uint32_t m) { return i ^ int(m); }); }
template <class T> void c_rot_down(SimdLane* l) { move<T>(l, [](int i, uint32_t d) { return int((i + d) % W); }); }
template <class T> void c_rot_up(SimdLane* l) { move<T>(l, [](int i, uint32_t d) { return int((i + W - d % W) % W); }); }
template <class T> void c_first(SimdLane* l) {
  int f = 0;
  while (!l[f].in) ++f;
  move<T>(l, [f](int, uint32_t) { return f; });
}
inline void c_ballot(SimdLane* l) {
  vote_t v = 0;
  for (int i = 0; i < W; ++i)
    if (l[i].in && in<vote_t>(l[i])) v |= vote_t(1) << i;
  for (int i = 0; i < W; ++i)
    if (l[i].in) out(l[i], v);
}
inline void c_all(SimdLane* l) {
  bool r = true;
  for (int i = 0; i < W; ++i) r = r && (!l[i].in || in<bool>(l[i]));
  for (int i = 0; i < W; ++i)
    if (l[i].in) out(l[i], r);
}
inline void c_any(SimdLane* l) {
  bool r = false;
  for (int i = 0; i < W; ++i) r = r || (l[i].in && in<bool>(l[i]));
  for (int i = 0; i < W; ++i)
    if (l[i].in) out(l[i], r);
}
inline void c_is_first(SimdLane* l) {
  int f = 0;
  while (!l[f].in) ++f;
  for (int i = 0; i < W; ++i)
    if (l[i].in) out(l[i], i == f);
}

template <class T>
T collective(const char* what, bm::msl::SimdCombine fn, const T& x, uint32_t arg, const char* file, int line) {
  T r;
  bm::msl::simd_collective(what, fn, &x, &r, arg, file, line);
  return r;
}

}  // namespace detail

inline void simdgroup_barrier(mem_flags, BM_MSL_SITE) {
  char dummy = 0;
  bm::msl::simd_collective("simdgroup_barrier", &detail::c_nop, &dummy, &dummy, 0, bm_file, bm_line);
}

#define BM_MSL_SIMD1(NAME, FN)                                                                       \
  template <class A>                                                                                 \
  detail::value_t<A> NAME(const A& x, BM_MSL_SITE) {                                                 \
    using T = detail::value_t<A>;                                                                    \
    return detail::collective<T>(#NAME, &FN, T(x), 0, bm_file, bm_line);                             \
  }
BM_MSL_SIMD1(simd_sum, detail::c_sum<T>)
BM_MSL_SIMD1(simd_product, detail::c_product<T>)
BM_MSL_SIMD1(simd_min, detail::c_min<T>)
BM_MSL_SIMD1(simd_max, detail::c_max<T>)
BM_MSL_SIMD1(simd_and, detail::c_and<T>)
BM_MSL_SIMD1(simd_or, detail::c_or<T>)
BM_MSL_SIMD1(simd_xor, detail::c_xor<T>)
BM_MSL_SIMD1(simd_prefix_inclusive_sum, (detail::c_scan<T, true, false>))
BM_MSL_SIMD1(simd_prefix_exclusive_sum, (detail::c_scan<T, false, false>))
BM_MSL_SIMD1(simd_prefix_inclusive_product, (detail::c_scan<T, true, true>))
BM_MSL_SIMD1(simd_prefix_exclusive_product, (detail::c_scan<T, false, true>))
BM_MSL_SIMD1(simd_broadcast_first, detail::c_first<T>)
#undef BM_MSL_SIMD1

#define BM_MSL_SIMD2(NAME, FN)                                                                       \
  template <class A>                                                                                 \
  detail::value_t<A> NAME(const A& x, ushort lane_or_delta, BM_MSL_SITE) {                           \
    using T = detail::value_t<A>;                                                                    \
    return detail::collective<T>(#NAME, &FN, T(x), lane_or_delta, bm_file, bm_line);                 \
  }
BM_MSL_SIMD2(simd_shuffle, detail::c_shuffle<T>)
BM_MSL_SIMD2(simd_broadcast, detail::c_shuffle<T>)
BM_MSL_SIMD2(simd_shuffle_down, detail::c_down<T>)
BM_MSL_SIMD2(simd_shuffle_up, detail::c_up<T>)
BM_MSL_SIMD2(simd_shuffle_xor, detail::c_xor_lane<T>)
BM_MSL_SIMD2(simd_shuffle_rotate_down, detail::c_rot_down<T>)
BM_MSL_SIMD2(simd_shuffle_rotate_up, detail::c_rot_up<T>)
#undef BM_MSL_SIMD2

inline simd_vote simd_ballot(bool b, BM_MSL_SITE) {
  return simd_vote{detail::collective<vote_t>("simd_ballot", &detail::c_ballot, vote_t(b), 0, bm_file, bm_line)};
}
inline simd_vote simd_active_threads_mask(BM_MSL_SITE) {
  return simd_vote{detail::collective<vote_t>("simd_active_threads_mask", &detail::c_ballot, vote_t(1), 0, bm_file, bm_line)};
}
inline bool simd_all(bool b, BM_MSL_SITE) { return detail::collective<bool>("simd_all", &detail::c_all, b, 0, bm_file, bm_line); }
inline bool simd_any(bool b, BM_MSL_SITE) { return detail::collective<bool>("simd_any", &detail::c_any, b, 0, bm_file, bm_line); }
inline bool simd_is_first(BM_MSL_SITE) {
  return detail::collective<bool>("simd_is_first", &detail::c_is_first, true, 0, bm_file, bm_line);
}

}  // namespace metal
