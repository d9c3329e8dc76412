// MSL atomics for the simulator: atomic<T> (atomic_int, atomic_uint, atomic_bool, atomic_float,
// atomic_ulong) and the *_explicit functions. They are real atomic operations on the underlying
// storage (the compiler's __atomic builtins), so they stay correct if threadgroups ever run on
// several host threads. Objects may be reached through a raw pointer (`&counters[i]`, a
// threadgroup variable) or a checked pointer (bounds-checked first).
#pragma once
#include <type_traits>

#include "msl_sim/stdlib/math.h"
#include "msl_sim/stdlib/pointer.h"
#include "msl_sim/stdlib/scalar.h"

namespace metal {

enum memory_order {
  memory_order_relaxed = __ATOMIC_RELAXED,
  memory_order_acquire = __ATOMIC_ACQUIRE,
  memory_order_release = __ATOMIC_RELEASE,
  memory_order_acq_rel = __ATOMIC_ACQ_REL,
  memory_order_seq_cst = __ATOMIC_SEQ_CST,
};

template <class T>
struct _atomic {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "MSL atomics are 32- or 64-bit");
  T v_;
};
template <class T>
using atomic = _atomic<T>;
using atomic_int = _atomic<int>;
using atomic_uint = _atomic<uint>;
using atomic_bool = _atomic<bool>;
using atomic_float = _atomic<float>;
using atomic_ulong = _atomic<ulong>;

namespace detail {
template <class T> using atomic_ptr = volatile _atomic<T>*;
template <class T>
T cas_update(atomic_ptr<T> a, T operand, T (*f)(T, T)) {
  T old;
  __atomic_load(&a->v_, &old, __ATOMIC_RELAXED);
  T next = f(old, operand);
  while (!__atomic_compare_exchange(&a->v_, &old, &next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    next = f(old, operand);
  return old;
}
}  // namespace detail

template <class T>
void atomic_store_explicit(detail::atomic_ptr<T> a, detail::identity_t<T> v, memory_order) {
  __atomic_store(&a->v_, &v, __ATOMIC_RELAXED);
}
template <class T>
T atomic_load_explicit(detail::atomic_ptr<T> a, memory_order) {
  T r;
  __atomic_load(&a->v_, &r, __ATOMIC_RELAXED);
  return r;
}
template <class T>
T atomic_exchange_explicit(detail::atomic_ptr<T> a, detail::identity_t<T> v, memory_order) {
  T r;
  __atomic_exchange(&a->v_, &v, &r, __ATOMIC_RELAXED);
  return r;
}
template <class T>
bool atomic_compare_exchange_weak_explicit(detail::atomic_ptr<T> a, T* expected, detail::identity_t<T> desired,
                                           memory_order, memory_order) {
  return __atomic_compare_exchange(&a->v_, expected, &desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

// fetch-and-modify: integer forms use the builtin, float ones a compare-exchange loop.
#define BM_MSL_FETCH(NAME, BUILTIN, EXPR)                                                            \
  template <class T>                                                                                 \
  T NAME(detail::atomic_ptr<T> a, detail::identity_t<T> v, memory_order) {                           \
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)                                 \
      return BUILTIN(&a->v_, v, __ATOMIC_RELAXED);                                                   \
    else                                                                                             \
      return detail::cas_update<T>(a, v, [](T x, T y) { return T(EXPR); });                         \
  }
BM_MSL_FETCH(atomic_fetch_add_explicit, __atomic_fetch_add, x + y)
BM_MSL_FETCH(atomic_fetch_sub_explicit, __atomic_fetch_sub, x - y)
BM_MSL_FETCH(atomic_fetch_and_explicit, __atomic_fetch_and, x & y)
BM_MSL_FETCH(atomic_fetch_or_explicit, __atomic_fetch_or, x | y)
BM_MSL_FETCH(atomic_fetch_xor_explicit, __atomic_fetch_xor, x ^ y)
#undef BM_MSL_FETCH
template <class T>
T atomic_fetch_min_explicit(detail::atomic_ptr<T> a, detail::identity_t<T> v, memory_order) {
  return detail::cas_update<T>(a, v, [](T x, T y) { return y < x ? y : x; });
}
template <class T>
T atomic_fetch_max_explicit(detail::atomic_ptr<T> a, detail::identity_t<T> v, memory_order) {
  return detail::cas_update<T>(a, v, [](T x, T y) { return x < y ? y : x; });
}

// Through a checked pointer: check the access, then act on the object.
#define BM_MSL_VIA_PTR(NAME)                                                                         \
  template <class T, class... A>                                                                     \
  auto NAME(bm::msl::ptr<_atomic<T>> p, A... args) { return NAME<T>(&p[0], args...); }
BM_MSL_VIA_PTR(atomic_store_explicit)
BM_MSL_VIA_PTR(atomic_load_explicit)
BM_MSL_VIA_PTR(atomic_exchange_explicit)
BM_MSL_VIA_PTR(atomic_compare_exchange_weak_explicit)
BM_MSL_VIA_PTR(atomic_fetch_add_explicit)
BM_MSL_VIA_PTR(atomic_fetch_sub_explicit)
BM_MSL_VIA_PTR(atomic_fetch_and_explicit)
BM_MSL_VIA_PTR(atomic_fetch_or_explicit)
BM_MSL_VIA_PTR(atomic_fetch_xor_explicit)
BM_MSL_VIA_PTR(atomic_fetch_min_explicit)
BM_MSL_VIA_PTR(atomic_fetch_max_explicit)
#undef BM_MSL_VIA_PTR

}  // namespace metal
