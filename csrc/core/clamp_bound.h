// clamp's bound conversion, shared by every backend so they clamp to the same values.
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/errors.h"
#include "core/op_registry.h"

namespace bm {

// A clamp bound in the compute type C. Integer tensors saturate out-of-range bounds (a plain cast
// would wrap 2**40 or turn 1e10 into INT_MIN and clamp everything to it).
template <typename C>
C clamp_bound(const Scalar& s) {
  if constexpr (std::is_integral_v<C>) {
    using lim = std::numeric_limits<C>;
    if (s.kind == Scalar::Float) {
      if (std::isnan(s.f)) throw ValueError("[clamp] a NaN bound needs a floating point input");
      if (s.f <= double(lim::lowest())) return lim::lowest();
      if (s.f >= double(lim::max())) return lim::max();
      return C(s.f);
    }
    if (s.i <= int64_t(lim::lowest())) return lim::lowest();
    if (s.i >= int64_t(lim::max())) return lim::max();
    return C(s.i);
  } else {
    return s.to<C>();
  }
}

}  // namespace bm
