// MSL math, common, integer, geometric and relational functions for the CUDA stand-in.
// float functions call CUDA's own (libdevice: expf, sinf...; no fast-math intrinsics, nvrtc_options
// has no --use_fast_math) where the simulator calls the C library, and use the simulator's formula
// where it has its own (rsqrt = 1/sqrt, exp10 = pow(10, x), sinpi = sin(pi x), fract, sign, mix...).
// fmin/fmax/min/max on floats: a NaN loses, and of two equal values (+0, -0) the first argument is
// returned, as glibc's fminf/fmaxf do for the simulator on x86-64 (CUDA's fminf orders -0 < +0).
// half/bfloat compute in float and round once; vectors apply the scalar function per component.
// These are declared in namespace metal although CUDA declares float overloads of many of them at
// global scope: BM_CUDA_SHADER_SCOPE (metal_stdlib) puts using-declarations of every name here into
// each shader's namespace, so calls there find these and never CUDA's (no ambiguity).
// metal::precise:: and metal::fast:: name the same functions (always precise, as the simulator).
#pragma once
#include "cuda/stdlib/scalar.h"
#include "cuda/stdlib/traits.h"
#include "cuda/stdlib/vec.h"

namespace metal {

namespace detail {
template <class T> struct identity { typedef T type; };
template <class T> using identity_t = typename identity<T>::type;
template <class T, int N, class F>
constexpr vec<T, N> map1(const vec<T, N>& a, F f) {
  comps<T, N> c{};
  for (int i = 0; i < N; ++i) c.v[i] = f(a.d[i]);
  return vec<T, N>(c);
}
template <class T, int N, class F>
constexpr vec<T, N> map2(const vec<T, N>& a, const vec<T, N>& b, F f) {
  comps<T, N> c{};
  for (int i = 0; i < N; ++i) c.v[i] = f(a.d[i], b.d[i]);
  return vec<T, N>(c);
}
template <class T, int N, class F>
constexpr vec<T, N> map3(const vec<T, N>& a, const vec<T, N>& b, const vec<T, N>& e, F f) {
  comps<T, N> c{};
  for (int i = 0; i < N; ++i) c.v[i] = f(a.d[i], b.d[i], e.d[i]);
  return vec<T, N>(c);
}
template <class T, int N, class F>
constexpr vec<bool, N> test(const vec<T, N>& a, F f) {
  comps<bool, N> c{};
  for (int i = 0; i < N; ++i) c.v[i] = f(a.d[i]);
  return vec<bool, N>(c);
}
template <class I>
using if_int = enable_if_t<is_integral_v<I>, int>;
inline bool isnan_(float x) { return x != x; }
constexpr float kInf = __builtin_bit_cast(float, 0x7f800000u);
// glibc's fminf/fmaxf (x86-64): a NaN loses; of equal values the first argument wins.
inline float fmin_(float x, float y) { return isnan_(y) ? x : isnan_(x) ? y : (y < x ? y : x); }
inline float fmax_(float x, float y) { return isnan_(y) ? x : isnan_(x) ? y : (x < y ? y : x); }
}  // namespace detail

// ---- float-valued functions of one argument ----
#define BM_CUDA_F1(NAME, EXPR)                                                                       \
  inline float NAME(float x) { return EXPR; }                                                        \
  inline half NAME(half x) { return half(NAME(float(x))); }                                          \
  inline bfloat NAME(bfloat x) { return bfloat(NAME(float(x))); }                                    \
  template <class T, int N>                                                                          \
  inline vec<T, N> NAME(const vec<T, N>& v) {                                                        \
    return detail::map1(v, [](T x) { return T(NAME(x)); });                                          \
  }
BM_CUDA_F1(exp, ::expf(x))
BM_CUDA_F1(exp2, ::exp2f(x))
BM_CUDA_F1(exp10, ::powf(10.0f, x))
BM_CUDA_F1(log, ::logf(x))
BM_CUDA_F1(log2, ::log2f(x))
BM_CUDA_F1(log10, ::log10f(x))
BM_CUDA_F1(sqrt, ::sqrtf(x))
BM_CUDA_F1(rsqrt, 1.0f / ::sqrtf(x))
BM_CUDA_F1(sin, ::sinf(x))
BM_CUDA_F1(cos, ::cosf(x))
BM_CUDA_F1(tan, ::tanf(x))
BM_CUDA_F1(asin, ::asinf(x))
BM_CUDA_F1(acos, ::acosf(x))
BM_CUDA_F1(atan, ::atanf(x))
BM_CUDA_F1(sinh, ::sinhf(x))
BM_CUDA_F1(cosh, ::coshf(x))
BM_CUDA_F1(tanh, ::tanhf(x))
BM_CUDA_F1(asinh, ::asinhf(x))
BM_CUDA_F1(acosh, ::acoshf(x))
BM_CUDA_F1(atanh, ::atanhf(x))
BM_CUDA_F1(sinpi, ::sinf(3.14159265358979323846f * x))
BM_CUDA_F1(cospi, ::cosf(3.14159265358979323846f * x))
BM_CUDA_F1(floor, ::floorf(x))
BM_CUDA_F1(ceil, ::ceilf(x))
BM_CUDA_F1(round, ::roundf(x))
BM_CUDA_F1(rint, ::rintf(x))
BM_CUDA_F1(trunc, ::truncf(x))
BM_CUDA_F1(fabs, ::fabsf(x))
BM_CUDA_F1(abs, ::fabsf(x))
BM_CUDA_F1(fract, detail::fmin_(x - ::floorf(x), 0x1.fffffep-1f))
BM_CUDA_F1(saturate, detail::fmin_(detail::fmax_(x, 0.0f), 1.0f))
BM_CUDA_F1(sign, detail::isnan_(x) ? 0.0f : x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x)
#undef BM_CUDA_F1

// ---- float-valued functions of two and three arguments ----
#define BM_CUDA_F2(NAME, EXPR)                                                                       \
  inline float NAME(float x, float y) { return EXPR; }                                               \
  inline half NAME(half x, half y) { return half(NAME(float(x), float(y))); }                        \
  inline bfloat NAME(bfloat x, bfloat y) { return bfloat(NAME(float(x), float(y))); }
BM_CUDA_F2(pow, ::powf(x, y))
BM_CUDA_F2(powr, ::powf(x, y))
BM_CUDA_F2(atan2, ::atan2f(x, y))
BM_CUDA_F2(fmod, ::fmodf(x, y))
BM_CUDA_F2(fmin, detail::fmin_(x, y))
BM_CUDA_F2(fmax, detail::fmax_(x, y))
BM_CUDA_F2(min, detail::fmin_(x, y))  // MSL min/max on floats are fmin/fmax: a NaN loses
BM_CUDA_F2(max, detail::fmax_(x, y))
BM_CUDA_F2(copysign, ::copysignf(x, y))
BM_CUDA_F2(fdim, ::fdimf(x, y))
BM_CUDA_F2(step, y < x ? 0.0f : 1.0f)  // step(edge, x)
BM_CUDA_F2(divide, x / y)
#undef BM_CUDA_F2

#define BM_CUDA_F3(NAME, EXPR)                                                                       \
  inline float NAME(float x, float y, float z) { return EXPR; }                                      \
  inline half NAME(half x, half y, half z) { return half(NAME(float(x), float(y), float(z))); }      \
  inline bfloat NAME(bfloat x, bfloat y, bfloat z) { return bfloat(NAME(float(x), float(y), float(z))); }
BM_CUDA_F3(fma, ::fmaf(x, y, z))
BM_CUDA_F3(clamp, detail::fmin_(detail::fmax_(x, y), z))
BM_CUDA_F3(mix, x + (y - x) * z)
BM_CUDA_F3(fmin3, detail::fmin_(detail::fmin_(x, y), z))
BM_CUDA_F3(fmax3, detail::fmax_(detail::fmax_(x, y), z))
#undef BM_CUDA_F3
inline float smoothstep(float e0, float e1, float x) {
  float t = clamp((x - e0) / (e1 - e0), 0.0f, 1.0f);
  return t * t * (3.0f - 2.0f * t);
}
inline half smoothstep(half a, half b, half x) { return half(smoothstep(float(a), float(b), float(x))); }

inline float sincos(float x, float& c) {
  c = ::cosf(x);
  return ::sinf(x);
}
inline half sincos(half x, half& c) {
  c = half(::cosf(float(x)));
  return half(::sinf(float(x)));
}
inline float ldexp(float x, int e) { return ::ldexpf(x, e); }
inline float frexp(float x, int& e) { return ::frexpf(x, &e); }

// ---- integer functions ----
template <class I, detail::if_int<I> = 0>
constexpr I abs(I x) { return x < 0 ? I(-x) : x; }
template <class I, detail::if_int<I> = 0>
constexpr I min(I a, I b) { return b < a ? b : a; }
template <class I, detail::if_int<I> = 0>
constexpr I max(I a, I b) { return a < b ? b : a; }
template <class I, detail::if_int<I> = 0>
constexpr I clamp(I x, I lo, I hi) { return min(max(x, lo), hi); }
// Mixed integer types are an error in MSL; without these they would silently convert to float.
template <class A, class B, enable_if_t<is_integral_v<A> && is_integral_v<B> && !is_same_v<A, B>, int> = 0>
void min(A, B) = delete;
template <class A, class B, enable_if_t<is_integral_v<A> && is_integral_v<B> && !is_same_v<A, B>, int> = 0>
void max(A, B) = delete;
template <class I, detail::if_int<I> = 0>
constexpr I absdiff(I a, I b) { return a < b ? I(b - a) : I(a - b); }
template <class I, detail::if_int<I> = 0>
inline I popcount(I x) { return I(__popcll((unsigned long long)make_unsigned_t<I>(x))); }
template <class I, detail::if_int<I> = 0>
inline I clz(I x) {
  unsigned long long u = (unsigned long long)make_unsigned_t<I>(x);
  return u == 0 ? I(sizeof(I) * 8) : I(__clzll((long long)u) - (64 - int(sizeof(I)) * 8));
}
template <class I, detail::if_int<I> = 0>
inline I ctz(I x) {
  unsigned long long u = (unsigned long long)make_unsigned_t<I>(x);
  return u == 0 ? I(sizeof(I) * 8) : I(__ffsll((long long)u) - 1);
}
inline int mulhi(int a, int b) { return __mulhi(a, b); }
inline uint mulhi(uint a, uint b) { return __umulhi(a, b); }

// ---- vectors: component-wise forms of the two- and three-argument functions ----
#define BM_CUDA_V2(NAME)                                                                             \
  template <class T, int N>                                                                          \
  inline vec<T, N> NAME(const vec<T, N>& a, const vec<T, N>& b) {                                    \
    return detail::map2(a, b, [](T x, T y) { return T(NAME(x, y)); });                               \
  }                                                                                                  \
  template <class T, int N>                                                                          \
  inline vec<T, N> NAME(const vec<T, N>& a, detail::identity_t<T> b) { return NAME(a, vec<T, N>(b)); }
BM_CUDA_V2(pow) BM_CUDA_V2(powr) BM_CUDA_V2(atan2) BM_CUDA_V2(fmod) BM_CUDA_V2(fmin) BM_CUDA_V2(fmax)
BM_CUDA_V2(min) BM_CUDA_V2(max) BM_CUDA_V2(copysign) BM_CUDA_V2(fdim) BM_CUDA_V2(divide) BM_CUDA_V2(absdiff)
#undef BM_CUDA_V2
template <class T, int N>
inline vec<T, N> step(const vec<T, N>& e, const vec<T, N>& x) {
  return detail::map2(e, x, [](T a, T b) { return T(step(a, b)); });
}
template <class T, int N>
inline vec<T, N> step(detail::identity_t<T> e, const vec<T, N>& x) { return step(vec<T, N>(e), x); }

#define BM_CUDA_V3(NAME)                                                                             \
  template <class T, int N>                                                                          \
  inline vec<T, N> NAME(const vec<T, N>& a, const vec<T, N>& b, const vec<T, N>& c) {                \
    return detail::map3(a, b, c, [](T x, T y, T z) { return T(NAME(x, y, z)); });                    \
  }
BM_CUDA_V3(fma) BM_CUDA_V3(clamp) BM_CUDA_V3(mix) BM_CUDA_V3(fmin3) BM_CUDA_V3(fmax3) BM_CUDA_V3(smoothstep)
#undef BM_CUDA_V3
template <class T, int N>
inline vec<T, N> clamp(const vec<T, N>& x, detail::identity_t<T> lo, detail::identity_t<T> hi) {
  return clamp(x, vec<T, N>(lo), vec<T, N>(hi));
}
template <class T, int N>
inline vec<T, N> mix(const vec<T, N>& x, const vec<T, N>& y, detail::identity_t<T> a) {
  return mix(x, y, vec<T, N>(a));
}
#define BM_CUDA_VINT1(NAME)                                                                          \
  template <class T, int N, detail::if_int<T> = 0>                                                   \
  inline vec<T, N> NAME(const vec<T, N>& v) { return detail::map1(v, [](T x) { return NAME(x); }); }
BM_CUDA_VINT1(popcount) BM_CUDA_VINT1(clz) BM_CUDA_VINT1(ctz)
#undef BM_CUDA_VINT1

// ---- relational ----
#define BM_CUDA_TEST(NAME, EXPR)                                                                     \
  inline bool NAME(float x) { return EXPR; }                                                         \
  inline bool NAME(half h) { return NAME(float(h)); }                                                \
  inline bool NAME(bfloat h) { return NAME(float(h)); }                                              \
  template <class T, int N>                                                                          \
  inline vec<bool, N> NAME(const vec<T, N>& v) { return detail::test(v, [](T x) { return NAME(x); }); }
BM_CUDA_TEST(isnan, x != x)
BM_CUDA_TEST(isinf, ::fabsf(x) == detail::kInf)
BM_CUDA_TEST(isfinite, ::fabsf(x) < detail::kInf)
BM_CUDA_TEST(isnormal, ::fabsf(x) < detail::kInf && ::fabsf(x) >= 0x1p-126f)
BM_CUDA_TEST(signbit, (__builtin_bit_cast(uint, x) >> 31) != 0)
#undef BM_CUDA_TEST

template <class T>
constexpr T select(T a, T b, bool c) { return c ? b : a; }
template <class T, int N>
constexpr vec<T, N> select(const vec<T, N>& a, const vec<T, N>& b, const vec<bool, N>& c) {
  detail::comps<T, N> r{};
  for (int i = 0; i < N; ++i) r.v[i] = c.d[i] ? b.d[i] : a.d[i];
  return vec<T, N>(r);
}
template <class T, int N>
constexpr vec<T, N> select(const vec<T, N>& a, const vec<T, N>& b, bool c) { return c ? b : a; }

// ---- geometric ----
template <class T, int N>
inline T dot(const vec<T, N>& a, const vec<T, N>& b) {
  T s = a.d[0] * b.d[0];
  for (int i = 1; i < N; ++i) s = T(s + a.d[i] * b.d[i]);
  return s;
}
template <class T, int N>
inline T length_squared(const vec<T, N>& a) { return dot(a, a); }
template <class T, int N>
inline T length(const vec<T, N>& a) { return sqrt(dot(a, a)); }
template <class T, int N>
inline T distance(const vec<T, N>& a, const vec<T, N>& b) { return length(a - b); }
template <class T, int N>
inline vec<T, N> normalize(const vec<T, N>& a) { return a * rsqrt(dot(a, a)); }
template <class T>
inline vec<T, 3> cross(const vec<T, 3>& a, const vec<T, 3>& b) {
  return vec<T, 3>(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

// ---- reinterpretation ----
namespace detail {
template <class From, bool = is_vec_v<From>>
constexpr bool is_swizzle_ref_v = false;
template <class From>
constexpr bool is_swizzle_ref_v<From, true> = !is_same_v<From, vec<typename From::value_type, From::size>>;
}  // namespace detail
template <class To, class From>
constexpr To as_type(const From& f) {
  if constexpr (detail::is_swizzle_ref_v<From>) {
    return as_type<To>(vec<typename From::value_type, From::size>(f));  // a swizzle_ref: its values
  } else {
    static_assert(sizeof(To) == sizeof(From), "as_type<> needs types of the same size");
    return __builtin_bit_cast(To, f);
  }
}

#define BM_CUDA_MATH_NAMES(X)                                                                        \
  X(exp) X(exp2) X(exp10) X(log) X(log2) X(log10) X(sqrt) X(rsqrt) X(sin) X(cos) X(tan) X(asin)     \
  X(acos) X(atan) X(sinh) X(cosh) X(tanh) X(asinh) X(acosh) X(atanh) X(sinpi) X(cospi) X(floor)     \
  X(ceil) X(round) X(rint) X(trunc) X(fabs) X(abs) X(fract) X(saturate) X(sign) X(pow) X(powr)      \
  X(atan2) X(fmod) X(fmin) X(fmax) X(min) X(max) X(copysign) X(fdim) X(step) X(divide) X(fma)       \
  X(clamp) X(mix) X(fmin3) X(fmax3) X(smoothstep) X(sincos) X(ldexp) X(frexp) X(isnan) X(isinf)     \
  X(isfinite) X(isnormal) X(signbit) X(dot) X(length) X(length_squared) X(distance) X(normalize)
#define BM_CUDA_USING(NAME) using ::metal::NAME;
namespace precise { BM_CUDA_MATH_NAMES(BM_CUDA_USING) }
namespace fast { BM_CUDA_MATH_NAMES(BM_CUDA_USING) }
#undef BM_CUDA_USING

}  // namespace metal
