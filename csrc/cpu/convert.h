// Value conversion between element types, as torch's casts do it (bool: != 0; float -> int truncates).
#pragma once
#include <type_traits>

#include "core/dtype.h"

namespace bm::cpu {

template <typename T, typename S>
inline T convert(S s) {
  if constexpr (std::is_same_v<T, S>) {
    return s;
  } else {
    using A = acc_t<S>;
    A v = static_cast<A>(s);
    if constexpr (std::is_same_v<T, bool>) return v != A(0);
    else if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>) return T(static_cast<float>(v));
    // float -> int8/uint8/int16 through int64, wrapping as torch's CPU casts (a direct conversion of
    // a negative float to uint8 is undefined; vectorised code saturates it).
    else if constexpr (std::is_floating_point_v<A> && sizeof(T) < 4) return static_cast<T>(static_cast<int64_t>(v));
    else return static_cast<T>(v);
  }
}

}  // namespace bm::cpu
