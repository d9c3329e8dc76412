// Barriers and SIMD-group functions for the CUDA stand-in: a threadgroup is a block, a simdgroup a
// 32-lane warp (thread_index_in_simdgroup is the hardware lane). Collectives act on the lanes that
// are active at the call (__activemask(): lanes that returned are not), as on a GPU.
// Reductions give the simulator's bits (csrc/msl_sim/stdlib/sync.h: a pairwise tree over the active
// lanes in lane order): with all 32 lanes active, an xor butterfly with masks 1, 2, 4, 8, 16 in that
// order computes exactly that tree in every lane, each step combining (lower lane, upper lane) in
// that order, so even non-commutative corner cases (NaN payloads, signed zeros) match. With some
// lanes inactive every lane gathers the active values and runs the simulator's tree itself.
#pragma once
#include "cuda/stdlib/math.h"
#include "cuda/stdlib/scalar.h"
#include "cuda/stdlib/vec.h"

namespace metal {

enum class mem_flags : uint {
  mem_none = 0,
  mem_device = 1,
  mem_threadgroup = 2,
  mem_texture = 4,
  mem_threadgroup_imageblock = 8,
};
constexpr mem_flags operator|(mem_flags a, mem_flags b) { return mem_flags(uint(a) | uint(b)); }

// __syncthreads orders shared and global memory among the block's threads: every mem_flags.
inline void threadgroup_barrier(mem_flags) { __syncthreads(); }
inline void simdgroup_barrier(mem_flags) { __syncwarp(__activemask()); }

typedef ulong vote_t;
struct simd_vote {
  vote_t v = 0;
  constexpr explicit operator vote_t() const { return v; }
  constexpr bool all() const { return v == 0xffffffffull; }
  constexpr bool any() const { return v != 0; }
};

namespace detail {

constexpr int W = 32;

inline uint lane_id() {
  uint r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}

// The value type of an argument (a swizzle_ref collapses to its vector).
template <class T, bool = is_vec_v<T>> struct value_of { typedef T type; };
template <class T> struct value_of<T, true> { typedef vec<typename T::value_type, T::size> type; };
template <class T> using value_t = typename value_of<decay_t<T>>::type;

// Shuffles of any trivially copyable value (1, 2 or 4n bytes), as 32-bit words.
template <class T>
struct words {
  uint w[sizeof(T) / 4];
};
template <class T, class F>
T shuffle_words(const T& x, F f) {
  if constexpr (sizeof(T) == 1) {
    return __builtin_bit_cast(T, uchar(f(uint(__builtin_bit_cast(uchar, x)))));
  } else if constexpr (sizeof(T) == 2) {
    return __builtin_bit_cast(T, ushort(f(uint(__builtin_bit_cast(ushort, x)))));
  } else {
    static_assert(sizeof(T) % 4 == 0, "simd shuffles move 1-, 2- or 4n-byte values");
    words<T> w = __builtin_bit_cast(words<T>, x);
    for (int i = 0; i < int(sizeof(T) / 4); ++i) w.w[i] = f(w.w[i]);
    return __builtin_bit_cast(T, w);
  }
}
template <class T> T shfl(const T& x, int src, uint mask) {
  return shuffle_words(x, [=](uint w) { return __shfl_sync(mask, w, src); });
}
template <class T> T shfl_xor(const T& x, int m, uint mask) {
  return shuffle_words(x, [=](uint w) { return __shfl_xor_sync(mask, w, m); });
}
template <class T> T shfl_down(const T& x, uint d, uint mask) {
  return shuffle_words(x, [=](uint w) { return __shfl_down_sync(mask, w, d); });
}
template <class T> T shfl_up(const T& x, uint d, uint mask) {
  return shuffle_words(x, [=](uint w) { return __shfl_up_sync(mask, w, d); });
}

// All-reduction: the simulator's pairwise tree over the active lanes in lane order.
template <class T, class Op>
T reduce(const T& x, Op op) {
  const uint mask = __activemask();
  if (mask == 0xffffffffu) {
    const uint lane = lane_id();
    T v = x;
    for (int m = 1; m < W; m <<= 1) {
      T o = shfl_xor(v, m, mask);
      v = (lane & uint(m)) ? T(op(o, v)) : T(op(v, o));
    }
    return v;
  }
  T v[W];
  int n = 0;
  for (int i = 0; i < W; ++i) {
    T o = shfl(x, i, mask);
    if ((mask >> i) & 1u) v[n++] = o;
  }
  for (int s = 1; s < n; s *= 2)
    for (int i = 0; i + s < n; i += 2 * s) v[i] = T(op(v[i], v[i + s]));
  return v[0];
}

// Scans over the active lanes in lane order. Every lane takes part in all 32 shuffles (a lane
// leaving the loop early would leave its peers' __shfl_sync waiting for it).
template <class T, bool Inclusive, bool Product>
T scan(const T& x) {
  const uint mask = __activemask(), lane = lane_id();
  T acc = T(Product ? 1 : 0);
  for (int i = 0; i < W; ++i) {
    T o = shfl(x, i, mask);
    const bool take = ((mask >> i) & 1u) && (Inclusive ? uint(i) <= lane : uint(i) < lane);
    if (take) acc = T(Product ? acc * o : acc + o);
  }
  return acc;
}

struct op_sum { template <class T> T operator()(const T& a, const T& b) const { return a + b; } };
struct op_product { template <class T> T operator()(const T& a, const T& b) const { return a * b; } };
struct op_min { template <class T> T operator()(const T& a, const T& b) const { return min(a, b); } };
struct op_max { template <class T> T operator()(const T& a, const T& b) const { return max(a, b); } };
struct op_and { template <class T> T operator()(const T& a, const T& b) const { return a & b; } };
struct op_or { template <class T> T operator()(const T& a, const T& b) const { return a | b; } };
struct op_xor { template <class T> T operator()(const T& a, const T& b) const { return a ^ b; } };

}  // namespace detail

#define BM_CUDA_SIMD_REDUCE(NAME, OP)                                                                \
  template <class A>                                                                                 \
  detail::value_t<A> NAME(const A& x) {                                                              \
    typedef detail::value_t<A> T;                                                                    \
    return detail::reduce(T(x), detail::OP());                                                       \
  }
BM_CUDA_SIMD_REDUCE(simd_sum, op_sum)
BM_CUDA_SIMD_REDUCE(simd_product, op_product)
BM_CUDA_SIMD_REDUCE(simd_min, op_min)
BM_CUDA_SIMD_REDUCE(simd_max, op_max)
BM_CUDA_SIMD_REDUCE(simd_and, op_and)
BM_CUDA_SIMD_REDUCE(simd_or, op_or)
BM_CUDA_SIMD_REDUCE(simd_xor, op_xor)
#undef BM_CUDA_SIMD_REDUCE

#define BM_CUDA_SIMD_SCAN(NAME, INCL, PROD)                                                          \
  template <class A>                                                                                 \
  detail::value_t<A> NAME(const A& x) {                                                              \
    return detail::scan<detail::value_t<A>, INCL, PROD>(detail::value_t<A>(x));                      \
  }
BM_CUDA_SIMD_SCAN(simd_prefix_inclusive_sum, true, false)
BM_CUDA_SIMD_SCAN(simd_prefix_exclusive_sum, false, false)
BM_CUDA_SIMD_SCAN(simd_prefix_inclusive_product, true, true)
BM_CUDA_SIMD_SCAN(simd_prefix_exclusive_product, false, true)
#undef BM_CUDA_SIMD_SCAN

// Data movement. A lane past the simdgroup's edge (down/up) keeps its own value, as __shfl_*_sync
// and the simulator do; reading an inactive lane gives an undefined value (the simulator: poison).
template <class A>
detail::value_t<A> simd_shuffle(const A& x, ushort lane) {
  return detail::shfl(detail::value_t<A>(x), lane, __activemask());
}
template <class A>
detail::value_t<A> simd_broadcast(const A& x, ushort lane) { return simd_shuffle(x, lane); }
template <class A>
detail::value_t<A> simd_shuffle_xor(const A& x, ushort mask) {
  return detail::shfl_xor(detail::value_t<A>(x), mask, __activemask());
}
template <class A>
detail::value_t<A> simd_shuffle_down(const A& x, ushort delta) {
  return detail::shfl_down(detail::value_t<A>(x), delta, __activemask());
}
template <class A>
detail::value_t<A> simd_shuffle_up(const A& x, ushort delta) {
  return detail::shfl_up(detail::value_t<A>(x), delta, __activemask());
}
template <class A>
detail::value_t<A> simd_shuffle_rotate_down(const A& x, ushort delta) {
  return detail::shfl(detail::value_t<A>(x), int((detail::lane_id() + delta) % 32u), __activemask());
}
template <class A>
detail::value_t<A> simd_shuffle_rotate_up(const A& x, ushort delta) {
  return detail::shfl(detail::value_t<A>(x), int((detail::lane_id() + 32u - delta % 32u) % 32u), __activemask());
}
template <class A>
detail::value_t<A> simd_broadcast_first(const A& x) {
  const uint mask = __activemask();
  return detail::shfl(detail::value_t<A>(x), __ffs(int(mask)) - 1, mask);
}

inline simd_vote simd_ballot(bool b) { return simd_vote{vote_t(__ballot_sync(__activemask(), b))}; }
inline simd_vote simd_active_threads_mask() { return simd_vote{vote_t(__activemask())}; }
inline bool simd_all(bool b) { return __all_sync(__activemask(), b) != 0; }
inline bool simd_any(bool b) { return __any_sync(__activemask(), b) != 0; }
inline bool simd_is_first() { return int(detail::lane_id()) == __ffs(int(__activemask())) - 1; }

}  // namespace metal
