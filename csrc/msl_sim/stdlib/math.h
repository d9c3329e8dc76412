// MSL math, common, integer, geometric and relational functions for the simulator.
// float functions call the compiler's builtins (no <cmath>: it would put C functions such as
// ::abs into the global namespace, where shaders' unqualified calls would find them too).
// half/bfloat compute in float and round once; vectors apply the scalar function per component.
// metal::precise:: and metal::fast:: name the same functions (the simulator is always precise).
#pragma once
#include <type_traits>

#include "msl_sim/stdlib/scalar.h"
#include "msl_sim/stdlib/vec.h"

namespace metal {

namespace detail {
template <class T> struct identity { using type = T; };
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
using if_int = std::enable_if_t<std::is_integral_v<I>, int>;
}  // namespace detail

// ---- float-valued functions of one argument ----
#define BM_MSL_F1(NAME, EXPR)                                                                        \
  inline float NAME(float x) { return EXPR; }                                                        \
  inline half NAME(half x) { return half(NAME(float(x))); }                                          \
  inline bfloat NAME(bfloat x) { return bfloat(NAME(float(x))); }                                    \
  template <class T, int N>                                                                          \
  inline vec<T, N> NAME(const vec<T, N>& v) {                                                        \
    return detail::map1(v, [](T x) { return T(NAME(x)); });                                          \
  }
BM_MSL_F1(exp, __builtin_expf(x))
BM_MSL_F1(exp2, __builtin_exp2f(x))
BM_MSL_F1(exp10, __builtin_powf(10.0f, x))
BM_MSL_F1(log, __builtin_logf(x))
BM_MSL_F1(log2, __builtin_log2f(x))
BM_MSL_F1(log10, __builtin_log10f(x))
BM_MSL_F1(sqrt, __builtin_sqrtf(x))
BM_MSL_F1(rsqrt, 1.0f / __builtin_sqrtf(x))
BM_MSL_F1(sin, __builtin_sinf(x))
BM_MSL_F1(cos, __builtin_cosf(x))
BM_MSL_F1(tan, __builtin_tanf(x))
BM_MSL_F1(asin, __builtin_asinf(x))
BM_MSL_F1(acos, __builtin_acosf(x))
BM_MSL_F1(atan, __builtin_atanf(x))
BM_MSL_F1(sinh, __builtin_sinhf(x))
BM_MSL_F1(cosh, __builtin_coshf(x))
BM_MSL_F1(tanh, __builtin_tanhf(x))
BM_MSL_F1(asinh, __builtin_asinhf(x))
BM_MSL_F1(acosh, __builtin_acoshf(x))
BM_MSL_F1(atanh, __builtin_atanhf(x))
BM_MSL_F1(sinpi, __builtin_sinf(3.14159265358979323846f * x))
BM_MSL_F1(cospi, __builtin_cosf(3.14159265358979323846f * x))
BM_MSL_F1(floor, __builtin_floorf(x))
BM_MSL_F1(ceil, __builtin_ceilf(x))
BM_MSL_F1(round, __builtin_roundf(x))
BM_MSL_F1(rint, __builtin_rintf(x))
BM_MSL_F1(trunc, __builtin_truncf(x))
BM_MSL_F1(fabs, __builtin_fabsf(x))
BM_MSL_F1(abs, __builtin_fabsf(x))
BM_MSL_F1(fract, __builtin_fminf(x - __builtin_floorf(x), 0x1.fffffep-1f))
BM_MSL_F1(saturate, __builtin_fminf(__builtin_fmaxf(x, 0.0f), 1.0f))
BM_MSL_F1(sign, __builtin_isnan(x) ? 0.0f : x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x)
#undef BM_MSL_F1

// ---- float-valued functions of two and three arguments ----
#define BM_MSL_F2(NAME, EXPR)                                                                        \
  inline float NAME(float x, float y) { return EXPR; }                                               \
  inline half NAME(half x, half y) { return half(NAME(float(x), float(y))); }                        \
  inline bfloat NAME(bfloat x, bfloat y) { return bfloat(NAME(float(x), float(y))); }
BM_MSL_F2(pow, __builtin_powf(x, y))
BM_MSL_F2(powr, __builtin_powf(x, y))
BM_MSL_F2(atan2, __builtin_atan2f(x, y))
BM_MSL_F2(fmod, __builtin_fmodf(x, y))
BM_MSL_F2(fmin, __builtin_fminf(x, y))
BM_MSL_F2(fmax, __builtin_fmaxf(x, y))
BM_MSL_F2(min, __builtin_fminf(x, y))  // MSL min/max on floats are fmin/fmax: a NaN loses
BM_MSL_F2(max, __builtin_fmaxf(x, y))
BM_MSL_F2(copysign, __builtin_copysignf(x, y))
BM_MSL_F2(fdim, __builtin_fdimf(x, y))
BM_MSL_F2(step, y < x ? 0.0f : 1.0f)  // step(edge, x)
BM_MSL_F2(divide, x / y)
#undef BM_MSL_F2

#define BM_MSL_F3(NAME, EXPR)                                                                        \
  inline float NAME(float x, float y, float z) { return EXPR; }                                      \
  inline half NAME(half x, half y, half z) { return half(NAME(float(x), float(y), float(z))); }      \
  inline bfloat NAME(bfloat x, bfloat y, bfloat z) { return bfloat(NAME(float(x), float(y), float(z))); }
BM_MSL_F3(fma, __builtin_fmaf(x, y, z))
BM_MSL_F3(clamp, __builtin_fminf(__builtin_fmaxf(x, y), z))
BM_MSL_F3(mix, x + (y - x) * z)
BM_MSL_F3(fmin3, __builtin_fminf(__builtin_fminf(x, y), z))
BM_MSL_F3(fmax3, __builtin_fmaxf(__builtin_fmaxf(x, y), z))
BM_MSL_F3(smoothstep, [](float t) { return t * t * (3.0f - 2.0f * t); }(clamp((z - x) / (y - x), 0.0f, 1.0f)))
#undef BM_MSL_F3

inline float sincos(float x, float& c) {
  c = __builtin_cosf(x);
  return __builtin_sinf(x);
}
inline half sincos(half x, half& c) {
  c = half(__builtin_cosf(float(x)));
  return half(__builtin_sinf(float(x)));
}
inline float ldexp(float x, int e) { return __builtin_ldexpf(x, e); }
inline float frexp(float x, int& e) { return __builtin_frexpf(x, &e); }

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
template <class A, class B, std::enable_if_t<std::is_integral_v<A> && std::is_integral_v<B> && !std::is_same_v<A, B>, int> = 0>
void min(A, B) = delete;
template <class A, class B, std::enable_if_t<std::is_integral_v<A> && std::is_integral_v<B> && !std::is_same_v<A, B>, int> = 0>
void max(A, B) = delete;
template <class I, detail::if_int<I> = 0>
constexpr I absdiff(I a, I b) { return a < b ? I(b - a) : I(a - b); }
template <class I, detail::if_int<I> = 0>
constexpr I popcount(I x) { return I(__builtin_popcountll((unsigned long long)std::make_unsigned_t<I>(x))); }
template <class I, detail::if_int<I> = 0>
constexpr I clz(I x) {
  using U = std::make_unsigned_t<I>;
  U u = U(x);
  return u == 0 ? I(sizeof(I) * 8) : I(__builtin_clzll((unsigned long long)u) - (64 - int(sizeof(I)) * 8));
}
template <class I, detail::if_int<I> = 0>
constexpr I ctz(I x) {
  using U = std::make_unsigned_t<I>;
  U u = U(x);
  return u == 0 ? I(sizeof(I) * 8) : I(__builtin_ctzll((unsigned long long)u));
}
constexpr int mulhi(int a, int b) { return int((long(a) * long(b)) >> 32); }
constexpr uint mulhi(uint a, uint b) { return uint((ulong(a) * ulong(b)) >> 32); }

// ---- vectors: component-wise forms of the two- and three-argument functions ----
#define BM_MSL_V2(NAME)                                                                              \
  template <class T, int N>                                                                          \
  inline vec<T, N> NAME(const vec<T, N>& a, const vec<T, N>& b) {                                    \
    return detail::map2(a, b, [](T x, T y) { return T(NAME(x, y)); });                               \
  }                                                                                                  \
  template <class T, int N>                                                                          \
  inline vec<T, N> NAME(const vec<T, N>& a, detail::identity_t<T> b) { return NAME(a, vec<T, N>(b)); }
BM_MSL_V2(pow) BM_MSL_V2(powr) BM_MSL_V2(atan2) BM_MSL_V2(fmod) BM_MSL_V2(fmin) BM_MSL_V2(fmax)
BM_MSL_V2(min) BM_MSL_V2(max) BM_MSL_V2(copysign) BM_MSL_V2(fdim) BM_MSL_V2(divide) BM_MSL_V2(absdiff)
#undef BM_MSL_V2
template <class T, int N>
inline vec<T, N> step(const vec<T, N>& e, const vec<T, N>& x) {
  return detail::map2(e, x, [](T a, T b) { return T(step(a, b)); });
}
template <class T, int N>
inline vec<T, N> step(detail::identity_t<T> e, const vec<T, N>& x) { return step(vec<T, N>(e), x); }

#define BM_MSL_V3(NAME)                                                                              \
  template <class T, int N>                                                                          \
  inline vec<T, N> NAME(const vec<T, N>& a, const vec<T, N>& b, const vec<T, N>& c) {                \
    return detail::map3(a, b, c, [](T x, T y, T z) { return T(NAME(x, y, z)); });                    \
  }
BM_MSL_V3(fma) BM_MSL_V3(clamp) BM_MSL_V3(mix) BM_MSL_V3(fmin3) BM_MSL_V3(fmax3) BM_MSL_V3(smoothstep)
#undef BM_MSL_V3
template <class T, int N>
inline vec<T, N> clamp(const vec<T, N>& x, detail::identity_t<T> lo, detail::identity_t<T> hi) {
  return clamp(x, vec<T, N>(lo), vec<T, N>(hi));
}
template <class T, int N>
inline vec<T, N> mix(const vec<T, N>& x, const vec<T, N>& y, detail::identity_t<T> a) {
  return mix(x, y, vec<T, N>(a));
}
#define BM_MSL_VINT1(NAME)                                                                           \
  template <class T, int N, detail::if_int<T> = 0>                                                   \
  constexpr vec<T, N> NAME(const vec<T, N>& v) { return detail::map1(v, [](T x) { return NAME(x); }); }
BM_MSL_VINT1(popcount) BM_MSL_VINT1(clz) BM_MSL_VINT1(ctz)
#undef BM_MSL_VINT1

// ---- relational ----
#define BM_MSL_TEST(NAME, EXPR)                                                                      \
  inline bool NAME(float x) { return EXPR; }                                                         \
  inline bool NAME(half h) { return NAME(float(h)); }                                                \
  inline bool NAME(bfloat h) { return NAME(float(h)); }                                              \
  template <class T, int N>                                                                          \
  inline vec<bool, N> NAME(const vec<T, N>& v) { return detail::test(v, [](T x) { return NAME(x); }); }
BM_MSL_TEST(isnan, __builtin_isnan(x))
BM_MSL_TEST(isinf, __builtin_isinf(x) != 0)
BM_MSL_TEST(isfinite, __builtin_isfinite(x))
BM_MSL_TEST(isnormal, __builtin_isnormal(x))
BM_MSL_TEST(signbit, __builtin_signbit(x) != 0)
#undef BM_MSL_TEST

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
template <class From, class = void> struct is_swizzle_ref : std::false_type {};
template <class From>  // a vector-like type that is not a vec: a swizzle_ref (From::value_type only exists here)
struct is_swizzle_ref<From, std::enable_if_t<is_vec_v<From>>>
    : std::bool_constant<!std::is_same_v<From, vec<typename From::value_type, From::size>>> {};
}  // namespace detail
template <class To, class From>
constexpr To as_type(const From& f) {
  if constexpr (detail::is_swizzle_ref<From>::value) {
    return as_type<To>(vec<typename From::value_type, From::size>(f));  // a swizzle_ref: its values
  } else {
    static_assert(sizeof(To) == sizeof(From), "as_type<> needs types of the same size");
    return __builtin_bit_cast(To, f);
  }
}

#define BM_MSL_MATH_NAMES(X)                                                                         \
  X(exp) X(exp2) X(exp10) X(log) X(log2) X(log10) X(sqrt) X(rsqrt) X(sin) X(cos) X(tan) X(asin)     \
  X(acos) X(atan) X(sinh) X(cosh) X(tanh) X(asinh) X(acosh) X(atanh) X(sinpi) X(cospi) X(floor)     \
  X(ceil) X(round) X(rint) X(trunc) X(fabs) X(abs) X(fract) X(saturate) X(sign) X(pow) X(powr)      \
  X(atan2) X(fmod) X(fmin) X(fmax) X(min) X(max) X(copysign) X(fdim) X(step) X(divide) X(fma)       \
  X(clamp) X(mix) X(fmin3) X(fmax3) X(smoothstep) X(sincos) X(ldexp) X(frexp) X(isnan) X(isinf)     \
  X(isfinite) X(isnormal) X(signbit) X(dot) X(length) X(length_squared) X(distance) X(normalize)
#define BM_MSL_USING(NAME) using ::metal::NAME;
namespace precise { BM_MSL_MATH_NAMES(BM_MSL_USING) }
namespace fast { BM_MSL_MATH_NAMES(BM_MSL_USING) }
#undef BM_MSL_USING
#undef BM_MSL_MATH_NAMES

}  // namespace metal
