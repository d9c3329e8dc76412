// MSL's <metal_type_traits> for the simulator: the standard traits, except that half and bfloat
// are floating-point (and arithmetic) types and vectors are recognised by is_vector.
#pragma once
#include <type_traits>

#include "msl_sim/stdlib/scalar.h"
#include "msl_sim/stdlib/vec.h"

namespace metal {

using std::conditional;
using std::conditional_t;
using std::enable_if;
using std::enable_if_t;
using std::integral_constant;
using std::is_integral;
using std::is_integral_v;
using std::is_same;
using std::is_same_v;
using std::is_signed;
using std::is_signed_v;
using std::is_unsigned;
using std::is_unsigned_v;
using std::make_signed;
using std::make_signed_t;
using std::make_unsigned;
using std::make_unsigned_t;
using std::remove_cv;
using std::remove_cv_t;
using std::false_type;
using std::true_type;

template <class T>
struct is_floating_point : std::bool_constant<detail::is_scalar_float_v<std::remove_cv_t<T>>> {};
template <class T>
constexpr bool is_floating_point_v = is_floating_point<T>::value;
template <class T>
struct is_arithmetic : std::bool_constant<std::is_integral_v<std::remove_cv_t<T>> || is_floating_point_v<T>> {};
template <class T>
constexpr bool is_arithmetic_v = is_arithmetic<T>::value;
template <class T>
struct is_vector : std::bool_constant<detail::is_vec_v<T>> {};
template <class T>
constexpr bool is_vector_v = is_vector<T>::value;
template <class T>
struct is_scalar : std::bool_constant<is_arithmetic_v<T>> {};
template <class T>
constexpr bool is_scalar_v = is_scalar<T>::value;

}  // namespace metal
