// Loops shared by the unary and binary kernel families. Operands arrive broadcast to the output
// shape (zero strides on broadcast dims); StridedPlan coalesces dims and splits the work over the
// cores, and the row functors here pick a loop the compiler can vectorise for the common layouts:
// everything contiguous, or one input a broadcast scalar (stride 0) and the rest contiguous.
#pragma once
#include <atomic>
#include <type_traits>

#include "core/errors.h"
#include "core/op_registry.h"
#include "cpu/loops.h"

namespace bm::cpu {

template <typename T>
constexpr bool is_half_v = std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>;
template <typename T>
constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;

// The dtype mask of an op's table row, at compile time: kernels instantiate their arithmetic only
// for the dtypes their row accepts.
constexpr DTypeMask kRowMasks[] = {
#define BM_OP_MASK(name, nin, nout, dr, sr, dt) dt,
    BM_OPS(BM_OP_MASK)
#undef BM_OP_MASK
};
template <typename T>
constexpr bool row_has(OpId op) { return (kRowMasks[int(op)] & bit(dtype_of<T>::value)) != 0; }

// Registered kernels only run for dtypes in their row's mask, but every K<T> is compiled for every
// dtype; instantiations outside the mask end here instead of holding meaningless arithmetic.
[[noreturn]] inline void no_kernel(const char* op) {
  throw Error(std::string("[") + op + "] internal error: kernel called for a dtype outside its table row");
}

// A single value seen at every index: 0-d, or broadcast with zero strides (the `2` in `x + 2`).
inline bool is_broadcast_scalar(const Tensor& t) {
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] != 1 && t.strides[d] != 0) return false;
  return true;
}

// Calls row(ptrs, byte_strides, count) over every element of N same-shape operands. When each
// operand is contiguous or a broadcast scalar (the common case, and the only one that matters for
// tiny tensors, where building a StridedPlan costs more than the arithmetic) the rows are plain
// slices of [0, numel); otherwise StridedPlan walks the strides. Both split large work over the
// cores.
template <int N, typename Row>
void for_each_row(const std::array<const Tensor*, N>& ts, Row&& row) {
  std::array<int64_t, N> st;
  std::array<char*, N> base;
  for (int k = 0; k < N; ++k) {
    const Tensor& t = *ts[k];
    if (t.is_contiguous()) st[k] = int64_t(itemsize(t.dtype));
    else if (is_broadcast_scalar(t)) st[k] = 0;
    else return StridedPlan<N>(ts).run(row);
    base[k] = t.bytes();
  }
  auto slice = [&](int64_t b, int64_t e) {
    std::array<char*, N> p;
    for (int k = 0; k < N; ++k) p[k] = base[k] + b * st[k];
    row(p, st, e - b);
  };
  const int64_t n = ts[0]->numel();
  if (n < kParallelGrain) slice(0, n);
  else parallel_for(0, n, kParallelGrain, slice);
}

template <typename T>
inline T at(const char* p, int64_t i, int64_t stride) { return *reinterpret_cast<const T*>(p + i * stride); }

// True when pred holds for any element of t. Broadcast (stride-0) dims are read once, so a scalar
// broadcast to a large output costs one read. The checks that run before anything is written:
// a zero integer divisor (floor_divide, remainder, fmod), a negative integer exponent (pow).
template <typename T, typename Pred>
bool any_element(const Tensor& t, Pred pred) {
  Tensor v = t;
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.strides[d] == 0) v.shape[d] = 1;
  std::atomic<bool> found{false};
  StridedPlan<1> plan({&v});
  plan.run([&found, &pred](std::array<char*, 1> p, std::array<int64_t, 1> st, int64_t n) {
    bool hit = false;
    for (int64_t k = 0; k < n; ++k) hit |= pred(at<T>(p[0], k, st[0]));
    if (hit) found.store(true, std::memory_order_relaxed);
  });
  return found.load();
}
template <typename T>
bool any_zero(const Tensor& t) { return any_element<T>(t, [](T x) { return x == T(0); }); }

// out[i] = f(a[i]); f maps T -> R (conversions for the half types happen inside f).
template <typename R, typename T, typename F>
void map1(const KernelCall& c, F f) {
  for_each_row<2>({c.out, c.in[0]}, [&f](std::array<char*, 2> p, std::array<int64_t, 2> st, int64_t n) {
    R* o = reinterpret_cast<R*>(p[0]);
    const T* a = reinterpret_cast<const T*>(p[1]);
    if (st[0] == sizeof(R) && st[1] == sizeof(T)) {
      for (int64_t k = 0; k < n; ++k) o[k] = f(a[k]);
    } else if (st[0] == sizeof(R) && st[1] == 0) {
      const R v = f(*a);
      for (int64_t k = 0; k < n; ++k) o[k] = v;
    } else {
      for (int64_t k = 0; k < n; ++k) *reinterpret_cast<R*>(p[0] + k * st[0]) = f(at<T>(p[1], k, st[1]));
    }
  });
}

// One row of map2: o[k] = f(a[k], b[k]) over byte strides st (out, a, b).
template <typename R, typename T, typename F>
void map2_row(F& f, std::array<char*, 3> p, std::array<int64_t, 3> st, int64_t n) {
  R* o = reinterpret_cast<R*>(p[0]);
  const T* a = reinterpret_cast<const T*>(p[1]);
  const T* b = reinterpret_cast<const T*>(p[2]);
  constexpr int64_t sr = sizeof(R), sz = sizeof(T);
  if (st[0] == sr && st[1] == sz && st[2] == sz) {
    for (int64_t k = 0; k < n; ++k) o[k] = f(a[k], b[k]);
  } else if (st[0] == sr && st[1] == sz && st[2] == 0) {
    const T bv = *b;
    for (int64_t k = 0; k < n; ++k) o[k] = f(a[k], bv);
  } else if (st[0] == sr && st[1] == 0 && st[2] == sz) {
    const T av = *a;
    for (int64_t k = 0; k < n; ++k) o[k] = f(av, b[k]);
  } else {
    for (int64_t k = 0; k < n; ++k)
      *reinterpret_cast<R*>(p[0] + k * st[0]) = f(at<T>(p[1], k, st[1]), at<T>(p[2], k, st[2]));
  }
}

// out[i] = f(a[i], b[i]); f maps (T, T) -> R.
template <typename R, typename T, typename F>
void map2(const KernelCall& c, F f) {
  for_each_row<3>({c.out, c.in[0], c.in[1]}, [&f](std::array<char*, 3> p, std::array<int64_t, 3> st, int64_t n) {
    map2_row<R, T>(f, p, st, n);
  });
}

}  // namespace bm::cpu
