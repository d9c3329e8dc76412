// Type traits for the CUDA stand-in (NVRTC has no standard headers): what the stand-in needs and
// MSL's <metal_type_traits> offers, in namespace metal. half and bfloat are floating-point and
// arithmetic types; vectors are recognised by is_vector (defined in vec.h).
#pragma once

namespace metal {

template <class T, T V>
struct integral_constant {
  static constexpr T value = V;
  constexpr operator T() const { return V; }
};
template <bool B>
using bool_constant = integral_constant<bool, B>;
using true_type = bool_constant<true>;
using false_type = bool_constant<false>;

template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { typedef T type; };
template <bool B, class T = void> using enable_if_t = typename enable_if<B, T>::type;

template <bool B, class T, class F> struct conditional { typedef T type; };
template <class T, class F> struct conditional<false, T, F> { typedef F type; };
template <bool B, class T, class F> using conditional_t = typename conditional<B, T, F>::type;

template <class A, class B> struct is_same : false_type {};
template <class A> struct is_same<A, A> : true_type {};
template <class A, class B> constexpr bool is_same_v = is_same<A, B>::value;

template <class T> struct remove_cv { typedef T type; };
template <class T> struct remove_cv<const T> { typedef T type; };
template <class T> struct remove_cv<volatile T> { typedef T type; };
template <class T> struct remove_cv<const volatile T> { typedef T type; };
template <class T> using remove_cv_t = typename remove_cv<T>::type;
template <class T> struct remove_reference { typedef T type; };
template <class T> struct remove_reference<T&> { typedef T type; };
template <class T> struct remove_reference<T&&> { typedef T type; };
template <class T> using remove_reference_t = typename remove_reference<T>::type;
template <class T> using decay_t = remove_cv_t<remove_reference_t<T>>;

namespace detail {
template <class T> struct int_info { static constexpr bool is_int = false, is_signed = false; };
#define BM_CUDA_INT(T, S, U)                                                                        \
  template <> struct int_info<T> {                                                                  \
    static constexpr bool is_int = true, is_signed = S;                                             \
    typedef U unsigned_type;                                                                        \
  };
BM_CUDA_INT(bool, false, bool)
BM_CUDA_INT(char, (char(-1) < 0), unsigned char)
BM_CUDA_INT(signed char, true, unsigned char)
BM_CUDA_INT(unsigned char, false, unsigned char)
BM_CUDA_INT(short, true, unsigned short)
BM_CUDA_INT(unsigned short, false, unsigned short)
BM_CUDA_INT(int, true, unsigned int)
BM_CUDA_INT(unsigned int, false, unsigned int)
BM_CUDA_INT(long, true, unsigned long)
BM_CUDA_INT(unsigned long, false, unsigned long)
BM_CUDA_INT(long long, true, unsigned long long)
BM_CUDA_INT(unsigned long long, false, unsigned long long)
#undef BM_CUDA_INT
template <class T> struct is_float16 : false_type {};  // half, bfloat: scalar.h
}  // namespace detail

template <class T> struct is_integral : bool_constant<detail::int_info<remove_cv_t<T>>::is_int> {};
template <class T> constexpr bool is_integral_v = is_integral<T>::value;
template <class T>
struct is_floating_point
    : bool_constant<is_same_v<remove_cv_t<T>, float> || is_same_v<remove_cv_t<T>, double> ||
                    detail::is_float16<remove_cv_t<T>>::value> {};
template <class T> constexpr bool is_floating_point_v = is_floating_point<T>::value;
template <class T> struct is_arithmetic : bool_constant<is_integral_v<T> || is_floating_point_v<T>> {};
template <class T> constexpr bool is_arithmetic_v = is_arithmetic<T>::value;
template <class T>
struct is_signed : bool_constant<detail::int_info<remove_cv_t<T>>::is_signed || is_floating_point_v<T>> {};
template <class T> constexpr bool is_signed_v = is_signed<T>::value;
template <class T> struct is_unsigned : bool_constant<is_integral_v<T> && !is_signed_v<T>> {};
template <class T> constexpr bool is_unsigned_v = is_unsigned<T>::value;
template <class T> struct make_unsigned { typedef typename detail::int_info<T>::unsigned_type type; };
template <class T> using make_unsigned_t = typename make_unsigned<T>::type;

}  // namespace metal
