#include "core/dtype.h"

#include <atomic>

#include "core/errors.h"

namespace bm {

size_t itemsize(DType d) {
  static const size_t sizes[] = {1, 4, 8, 2, 2, 4, 8, 1, 1, 2};
  return sizes[static_cast<int>(d)];
}

const char* dtype_name(DType d) {
  static const char* names[] = {"bool", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                                "int8", "uint8", "int16"};
  return names[static_cast<int>(d)];
}

bool is_floating(DType d) { return (bit(d) & kFloatMask) != 0; }
bool is_integral(DType d) { return (bit(d) & kIntMask) != 0; }
namespace {
// bm.set_default_dtype: one process-wide setting, as torch's. Atomic so readers on worker threads
// never see a torn value; set only from Python (under the GIL).
std::atomic<DType> g_default_float{DType::Float32};
}  // namespace

DType default_float_dtype() { return g_default_float.load(std::memory_order_relaxed); }

void set_default_float_dtype(DType d) {
  if (!is_floating(d))
    throw TypeError(std::string("[set_default_dtype] only floating-point types are supported as the default type, got ") +
                    dtype_name(d));
  g_default_float.store(d, std::memory_order_relaxed);
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  bool fa = is_floating(a), fb = is_floating(b);
  if (fa != fb) return fa ? a : b;  // float beats int, whatever the widths
  if (!fa) {
    // uint8 is the only unsigned type: with a signed type of its width or narrower it meets at
    // the next wider signed type (uint8 + int8 -> int16), as torch.promote_types.
    if (a == DType::UInt8 || b == DType::UInt8) {
      DType other = a == DType::UInt8 ? b : a;
      return other == DType::Int8 ? DType::Int16 : other;
    }
    return itemsize(a) >= itemsize(b) ? a : b;
  }
  // Both floating. float16 with bfloat16 meet at float32, as in torch.
  if (a == DType::Float64 || b == DType::Float64) return DType::Float64;
  return DType::Float32;
}

DType dtype_from_name(const std::string& name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == dtype_name(static_cast<DType>(i))) return static_cast<DType>(i);
  if (name == "float" ) return DType::Float32;
  if (name == "half") return DType::Float16;
  if (name == "double") return DType::Float64;
  if (name == "int" ) return DType::Int32;
  if (name == "long") return DType::Int64;
  if (name == "short") return DType::Int16;
  throw TypeError("[dtype] unknown dtype '" + name + "'");
}

}  // namespace bm
