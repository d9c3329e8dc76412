#include "core/dtype.h"

#include "core/errors.h"

namespace bm {

size_t itemsize(DType d) {
  static const size_t sizes[] = {1, 4, 8, 2, 2, 4, 8};
  return sizes[static_cast<int>(d)];
}

const char* dtype_name(DType d) {
  static const char* names[] = {"bool", "int32", "int64", "float16", "bfloat16", "float32", "float64"};
  return names[static_cast<int>(d)];
}

bool is_floating(DType d) { return (bit(d) & kFloatMask) != 0; }
bool is_integral(DType d) { return (bit(d) & kIntMask) != 0; }
DType default_float_dtype() { return DType::Float32; }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  bool fa = is_floating(a), fb = is_floating(b);
  if (fa != fb) return fa ? a : b;  // float beats int, whatever the widths
  if (!fa) return itemsize(a) >= itemsize(b) ? a : b;
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
  throw TypeError("[dtype] unknown dtype '" + name + "'");
}

}  // namespace bm
