// MSL atomics for the CUDA stand-in: atomic<T> (atomic_int, atomic_uint, atomic_bool,
// atomic_float, atomic_ulong) and the *_explicit functions on CUDA's atomic operations. Metal's
// device atomics are relaxed; so are these (memory_order is accepted and ignored, as MSL allows
// only memory_order_relaxed).
#pragma once
#include "cuda/stdlib/math.h"
#include "cuda/stdlib/scalar.h"
#include "cuda/stdlib/traits.h"

namespace metal {

enum memory_order {
  memory_order_relaxed,
  memory_order_acquire,
  memory_order_release,
  memory_order_acq_rel,
  memory_order_seq_cst,
};

template <class T>
struct _atomic {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8 || is_same_v<T, bool>, "MSL atomics are 32- or 64-bit");
  T v_;
};
template <class T> using atomic = _atomic<T>;
typedef _atomic<int> atomic_int;
typedef _atomic<uint> atomic_uint;
typedef _atomic<bool> atomic_bool;
typedef _atomic<float> atomic_float;
typedef _atomic<ulong> atomic_ulong;

namespace detail {
template <class T> using atomic_ptr = volatile _atomic<T>*;
// The word CUDA's atomics act on: int, unsigned, unsigned long long, float.
template <class T> struct atomic_word { typedef T type; };
template <> struct atomic_word<long> { typedef unsigned long long type; };
template <> struct atomic_word<ulong> { typedef unsigned long long type; };
template <class T> using word_t = typename atomic_word<T>::type;
template <class T> word_t<T>* word(atomic_ptr<T> a) { return (word_t<T>*)(&a->v_); }
template <class T>
T cas_update(atomic_ptr<T> a, T operand, T (*f)(T, T)) {
  static_assert(sizeof(T) == 4, "compare-exchange loop on 32-bit values");
  unsigned* p = (unsigned*)(&a->v_);
  unsigned old = *(volatile unsigned*)p, assumed;
  do {
    assumed = old;
    T next = f(__builtin_bit_cast(T, assumed), operand);
    old = atomicCAS(p, assumed, __builtin_bit_cast(unsigned, next));
  } while (old != assumed);
  return __builtin_bit_cast(T, old);
}
}  // namespace detail

template <class T>
void atomic_store_explicit(detail::atomic_ptr<T> a, detail::identity_t<T> v, memory_order) {
  a->v_ = v;  // an aligned volatile store is a single (relaxed atomic) store
}
template <class T>
T atomic_load_explicit(detail::atomic_ptr<T> a, memory_order) {
  return a->v_;
}
template <class T>
T atomic_exchange_explicit(detail::atomic_ptr<T> a, detail::identity_t<T> v, memory_order) {
  return T(atomicExch(detail::word(a), detail::word_t<T>(v)));
}
template <class T>
bool atomic_compare_exchange_weak_explicit(detail::atomic_ptr<T> a, T* expected, detail::identity_t<T> desired,
                                           memory_order, memory_order) {
  typedef detail::word_t<T> Wd;
  Wd old = atomicCAS(detail::word(a), Wd(*expected), Wd(desired));
  bool ok = old == Wd(*expected);
  *expected = T(old);
  return ok;
}

#define BM_CUDA_FETCH(NAME, CUDA_FN, EXPR)                                                           \
  template <class T>                                                                                 \
  T NAME(detail::atomic_ptr<T> a, detail::identity_t<T> v, memory_order) {                           \
    if constexpr (is_same_v<T, float>)                                                               \
      return detail::cas_update<T>(a, v, [](T x, T y) { return T(EXPR); });                         \
    else                                                                                             \
      return T(CUDA_FN(detail::word(a), detail::word_t<T>(v)));                                      \
  }
BM_CUDA_FETCH(atomic_fetch_add_explicit, atomicAdd, x + y)
BM_CUDA_FETCH(atomic_fetch_and_explicit, atomicAnd, x)
BM_CUDA_FETCH(atomic_fetch_or_explicit, atomicOr, x)
BM_CUDA_FETCH(atomic_fetch_xor_explicit, atomicXor, x)
#undef BM_CUDA_FETCH
template <class T>
T atomic_fetch_sub_explicit(detail::atomic_ptr<T> a, detail::identity_t<T> v, memory_order o) {
  if constexpr (is_same_v<T, float>) return detail::cas_update<T>(a, v, [](T x, T y) { return T(x - y); });
  else return atomic_fetch_add_explicit(a, T(detail::word_t<T>(0) - detail::word_t<T>(v)), o);
}
template <class T>
T atomic_fetch_min_explicit(detail::atomic_ptr<T> a, detail::identity_t<T> v, memory_order) {
  if constexpr (is_same_v<T, float>) return detail::cas_update<T>(a, v, [](T x, T y) { return y < x ? y : x; });
  else if constexpr (is_same_v<T, long>) return T(atomicMin((long long*)(&a->v_), (long long)v));
  else return T(atomicMin(detail::word(a), detail::word_t<T>(v)));
}
template <class T>
T atomic_fetch_max_explicit(detail::atomic_ptr<T> a, detail::identity_t<T> v, memory_order) {
  if constexpr (is_same_v<T, float>) return detail::cas_update<T>(a, v, [](T x, T y) { return x < y ? y : x; });
  else if constexpr (is_same_v<T, long>) return T(atomicMax((long long*)(&a->v_), (long long)v));
  else return T(atomicMax(detail::word(a), detail::word_t<T>(v)));
}

}  // namespace metal
