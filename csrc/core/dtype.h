// Element types and torch's type-promotion lattice.
#pragma once
#include <cstdint>
#include <string>

#include "core/half.h"

namespace bm {

// Order matters: it is the index into per-dtype kernel tables. The 8- and 16-bit integers came
// later and sit at the end so the older codes (and the tables indexed by them) kept their values.
enum class DType : uint8_t { Bool, Int32, Int64, Float16, BFloat16, Float32, Float64, Int8, UInt8, Int16 };
constexpr int kNumDTypes = 10;

using DTypeMask = uint32_t;
constexpr DTypeMask bit(DType d) { return 1u << static_cast<int>(d); }
constexpr DTypeMask kFloatMask = bit(DType::Float16) | bit(DType::BFloat16) | bit(DType::Float32) | bit(DType::Float64);
constexpr DTypeMask kIntMask = bit(DType::Int8) | bit(DType::UInt8) | bit(DType::Int16) | bit(DType::Int32) | bit(DType::Int64);
constexpr DTypeMask kAllMask = kFloatMask | kIntMask | bit(DType::Bool);

size_t itemsize(DType d);
const char* dtype_name(DType d);  // "float32"
bool is_floating(DType d);
bool is_integral(DType d);  // int8, uint8, int16, int32, int64 (not bool)
// torch.promote_types for two dtypes.
DType promote_types(DType a, DType b);
DType default_float_dtype();  // bm.get_default_dtype(): float32 unless set
void set_default_float_dtype(DType d);  // throws TypeError for a non-floating dtype
DType dtype_from_name(const std::string& name);  // throws TypeError

template <typename T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<int8_t> { static constexpr DType value = DType::Int8; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct dtype_of<int16_t> { static constexpr DType value = DType::Int16; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct dtype_of<half_t> { static constexpr DType value = DType::Float16; };
template <> struct dtype_of<bfloat16_t> { static constexpr DType value = DType::BFloat16; };
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };

// Type used for arithmetic on T: half types compute in float32.
template <typename T> struct acc_type { using type = T; };
template <> struct acc_type<half_t> { using type = float; };
template <> struct acc_type<bfloat16_t> { using type = float; };
template <typename T> using acc_t = typename acc_type<T>::type;

// Calls f.template operator()<T>() with the C++ type for dtype d.
template <typename F>
decltype(auto) visit_dtype(DType d, F&& f) {
  switch (d) {
    case DType::Bool: return f(bool{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::Float16: return f(half_t{});
    case DType::BFloat16: return f(bfloat16_t{});
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Int8: return f(int8_t{});
    case DType::UInt8: return f(uint8_t{});
    case DType::Int16: return f(int16_t{});
  }
  return f(float{});
}

}  // namespace bm
