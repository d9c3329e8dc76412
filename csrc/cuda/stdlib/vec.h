// MSL vector types for the CUDA stand-in: the simulator's vec<T, N> (csrc/msl_sim/stdlib/vec.h)
// without standard headers. Metal's layout (float3 is 16 bytes, aligned 16), MSL construction rules
// (broadcast a scalar, concatenate scalars and vectors, explicit component-wise conversion), .x .y
// .z .w / .r .g .b .a, and swizzles: the pre-pass rewrites `v.xy` into `v.template swizzle<0, 1>()`,
// which on an lvalue returns a swizzle_ref (a vec<T, 2> that also writes assignments back).
// These are not CUDA's float4 & co. (global structs without operators): inside a shader's namespace
// BM_CUDA_SHADER_SCOPE (metal_stdlib) makes the names mean these.
#pragma once
#include "cuda/stdlib/scalar.h"
#include "cuda/stdlib/traits.h"

namespace metal {

template <class T, int N>
struct vec;

namespace detail {

struct vec_tag {};
template <class S>
constexpr bool is_vec_v = __is_base_of(vec_tag, decay_t<S>);

template <class T, int N>
struct vec_storage;
template <class T>
struct vec_storage<T, 2> : vec_tag {
  union {
    T d[2];
    struct { T x, y; };
    struct { T r, g; };
  };
  vec_storage() = default;
  constexpr vec_storage(const T (&c)[2]) : d{c[0], c[1]} {}
};
template <class T>
struct vec_storage<T, 3> : vec_tag {
  union {
    T d[3];
    struct { T x, y, z; };
    struct { T r, g, b; };
  };
  vec_storage() = default;
  constexpr vec_storage(const T (&c)[3]) : d{c[0], c[1], c[2]} {}
};
template <class T>
struct vec_storage<T, 4> : vec_tag {
  union {
    T d[4];
    struct { T x, y, z, w; };
    struct { T r, g, b, a; };
  };
  vec_storage() = default;
  constexpr vec_storage(const T (&c)[4]) : d{c[0], c[1], c[2], c[3]} {}
};

template <class T, int N>
struct comps {
  T v[N];
};

template <class S>
constexpr int ncomp() {
  if constexpr (is_vec_v<S>) return decay_t<S>::size;
  else return 1;
}

template <class T, int N, class S>
constexpr void put(comps<T, N>& r, int& k, const S& s) {
  if constexpr (is_vec_v<S>) {
    for (int i = 0; i < decay_t<S>::size; ++i) r.v[k++] = T(s.d[i]);
  } else {
    r.v[k++] = T(s);
  }
}

template <int... I>
constexpr bool distinct() {
  constexpr int idx[] = {I...};
  for (int a = 0; a < int(sizeof...(I)); ++a)
    for (int b = a + 1; b < int(sizeof...(I)); ++b)
      if (idx[a] == idx[b]) return false;
  return true;
}

}  // namespace detail

template <class T, int N, int... I>
struct swizzle_ref;

template <class T, int N>
struct alignas(sizeof(T) * (N == 3 ? 4 : N)) vec : detail::vec_storage<T, N> {
  static_assert(N >= 2 && N <= 4, "MSL vectors have 2, 3 or 4 components");
  using value_type = T;
  using base = detail::vec_storage<T, N>;
  static constexpr int size = N;

  vec() = default;
  constexpr vec(detail::comps<T, N> c) : base(c.v) {}
  // A scalar fills every component (implicit, as in MSL: `float4 v = 0.0f;`).
  constexpr vec(T s) : vec(fill(s)) {}
  // Scalars and vectors concatenated: float4(a.xy, 0, 1), float3(v2, z)...
  template <class... A, enable_if_t<(sizeof...(A) >= 2) && ((detail::ncomp<A>() + ...) == N), int> = 0>
  constexpr vec(const A&... a) : vec(gather(a...)) {}
  // Component-wise value conversion from another element type (explicit, as in MSL).
  template <class U, enable_if_t<!is_same_v<U, T>, int> = 0>
  constexpr explicit vec(const vec<U, N>& o) : vec(gather(o)) {}

  constexpr T& operator[](int i) { return this->d[i]; }
  constexpr const T& operator[](int i) const { return this->d[i]; }

  template <int... I>
  constexpr swizzle_ref<T, N, I...> swizzle() & {
    static_assert(((I < N) && ...), "swizzle names a component this vector does not have");
    return swizzle_ref<T, N, I...>(*this);
  }
  template <int... I>
  constexpr vec<T, sizeof...(I)> swizzle() const& {
    static_assert(((I < N) && ...), "swizzle names a component this vector does not have");
    return vec<T, sizeof...(I)>(this->d[I]...);
  }

#define BM_VEC_BINOP(OP)                                                                           \
  friend constexpr vec operator OP(const vec& a, const vec& b) {                                   \
    detail::comps<T, N> c{};                                                                       \
    for (int i = 0; i < N; ++i) c.v[i] = T(a.d[i] OP b.d[i]);                                      \
    return vec(c);                                                                                 \
  }                                                                                                \
  friend constexpr vec operator OP(const vec& a, T b) { return a OP vec(b); }                      \
  friend constexpr vec operator OP(T a, const vec& b) { return vec(a) OP b; }                      \
  constexpr vec& operator OP##=(const vec& b) { return *this = *this OP b; }
  BM_VEC_BINOP(+) BM_VEC_BINOP(-) BM_VEC_BINOP(*) BM_VEC_BINOP(/) BM_VEC_BINOP(%)
  BM_VEC_BINOP(&) BM_VEC_BINOP(|) BM_VEC_BINOP(^) BM_VEC_BINOP(>>)
#undef BM_VEC_BINOP
  // A GPU shifts the bits of a negative integer left like any other; C++17 calls that undefined
  // (UBSan reports it), so signed components shift as their unsigned bits.
  friend constexpr vec operator<<(const vec& a, const vec& b) {
    detail::comps<T, N> c{};
    for (int i = 0; i < N; ++i) {
      if constexpr (is_integral_v<T> && is_signed_v<T>)
        c.v[i] = T(make_unsigned_t<T>(a.d[i]) << b.d[i]);
      else
        c.v[i] = T(a.d[i] << b.d[i]);
    }
    return vec(c);
  }
  friend constexpr vec operator<<(const vec& a, T b) { return a << vec(b); }
  friend constexpr vec operator<<(T a, const vec& b) { return vec(a) << b; }
  constexpr vec& operator<<=(const vec& b) { return *this = *this << b; }

#define BM_VEC_CMP(OP)                                                                             \
  friend constexpr vec<bool, N> operator OP(const vec& a, const vec& b) {                          \
    detail::comps<bool, N> c{};                                                                    \
    for (int i = 0; i < N; ++i) c.v[i] = bool(a.d[i] OP b.d[i]);                                   \
    return vec<bool, N>(c);                                                                        \
  }                                                                                                \
  friend constexpr vec<bool, N> operator OP(const vec& a, T b) { return a OP vec(b); }             \
  friend constexpr vec<bool, N> operator OP(T a, const vec& b) { return vec(a) OP b; }
  BM_VEC_CMP(==) BM_VEC_CMP(!=) BM_VEC_CMP(<) BM_VEC_CMP(<=) BM_VEC_CMP(>) BM_VEC_CMP(>=)
  BM_VEC_CMP(&&) BM_VEC_CMP(||)
#undef BM_VEC_CMP

  friend constexpr vec operator-(const vec& a) { return map(a, [](T x) { return T(-x); }); }
  friend constexpr vec operator+(const vec& a) { return a; }
  friend constexpr vec operator~(const vec& a) { return map(a, [](T x) { return T(~x); }); }
  friend constexpr vec<bool, N> operator!(const vec& a) {
    detail::comps<bool, N> c{};
    for (int i = 0; i < N; ++i) c.v[i] = !a.d[i];
    return vec<bool, N>(c);
  }
  constexpr vec& operator++() { return *this += T(1); }
  constexpr vec& operator--() { return *this -= T(1); }

 private:
  static constexpr detail::comps<T, N> fill(T s) {
    detail::comps<T, N> c{};
    for (int i = 0; i < N; ++i) c.v[i] = s;
    return c;
  }
  template <class... A>
  static constexpr detail::comps<T, N> gather(const A&... a) {
    detail::comps<T, N> c{};
    int k = 0;
    (detail::put(c, k, a), ...);
    return c;
  }
  template <class F>
  static constexpr vec map(const vec& a, F f) {
    detail::comps<T, N> c{};
    for (int i = 0; i < N; ++i) c.v[i] = f(a.d[i]);
    return vec(c);
  }
};

// `v.xy` on an lvalue: the selected values, plus write-back on assignment (`v.xy = w`, `v.zw += 1`).
template <class T, int N, int... I>
struct swizzle_ref : vec<T, sizeof...(I)> {
  using value = vec<T, sizeof...(I)>;
  vec<T, N>& src;

  constexpr explicit swizzle_ref(vec<T, N>& s) : value(s.d[I]...), src(s) {}
  swizzle_ref(const swizzle_ref&) = default;

  swizzle_ref& operator=(const value& v) {
    static_assert(detail::distinct<I...>(), "cannot assign to a swizzle that repeats a component");
    constexpr int idx[] = {I...};
    value copy = v;  // v may alias src
    for (int k = 0; k < int(sizeof...(I)); ++k) {
      src.d[idx[k]] = copy.d[k];
      this->d[k] = copy.d[k];
    }
    return *this;
  }
  swizzle_ref& operator=(const swizzle_ref& o) { return *this = static_cast<const value&>(o); }

#define BM_SWZ_COMPOUND(OP) \
  swizzle_ref& operator OP##=(const value& v) { return *this = static_cast<const value&>(*this) OP v; }
  BM_SWZ_COMPOUND(+) BM_SWZ_COMPOUND(-) BM_SWZ_COMPOUND(*) BM_SWZ_COMPOUND(/) BM_SWZ_COMPOUND(%)
  BM_SWZ_COMPOUND(&) BM_SWZ_COMPOUND(|) BM_SWZ_COMPOUND(^) BM_SWZ_COMPOUND(<<) BM_SWZ_COMPOUND(>>)
#undef BM_SWZ_COMPOUND
};

#define BM_MSL_VEC_ALIASES(T, NAME) \
  using NAME##2 = vec<T, 2>;        \
  using NAME##3 = vec<T, 3>;        \
  using NAME##4 = vec<T, 4>;
BM_MSL_VEC_ALIASES(float, float)
BM_MSL_VEC_ALIASES(half, half)
BM_MSL_VEC_ALIASES(bfloat, bfloat)
BM_MSL_VEC_ALIASES(int, int)
BM_MSL_VEC_ALIASES(uint, uint)
BM_MSL_VEC_ALIASES(short, short)
BM_MSL_VEC_ALIASES(ushort, ushort)
BM_MSL_VEC_ALIASES(char, char)
BM_MSL_VEC_ALIASES(uchar, uchar)
BM_MSL_VEC_ALIASES(long, long)
BM_MSL_VEC_ALIASES(ulong, ulong)
BM_MSL_VEC_ALIASES(bool, bool)
#undef BM_MSL_VEC_ALIASES

static_assert(sizeof(float3) == 16 && alignof(float3) == 16, "MSL float3 is 16 bytes");
static_assert(sizeof(half3) == 8 && sizeof(float2) == 8 && alignof(float2) == 8, "MSL vector layout");
static_assert(__is_trivially_copyable(float4), "vectors are raw memory");

template <class T, int N>
constexpr bool all(const vec<T, N>& v) {
  for (int i = 0; i < N; ++i)
    if (!v.d[i]) return false;
  return true;
}
template <class T, int N>
constexpr bool any(const vec<T, N>& v) {
  for (int i = 0; i < N; ++i)
    if (v.d[i]) return true;
  return false;
}
constexpr bool all(bool b) { return b; }
constexpr bool any(bool b) { return b; }

}  // namespace metal
