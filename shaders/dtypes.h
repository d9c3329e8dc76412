// The element types a kernel family is instantiated for, as an X-macro: X(metal type, name).
// Names match bessemer's dtype names so the host can build "<kernel>_<dtype>" host names.
#pragma once

#define BM_FOR_EACH_DTYPE(X) \
  X(bool, bool)              \
  X(int, int32)              \
  X(long, int64)             \
  X(half, float16)           \
  X(bfloat, bfloat16)        \
  X(float, float32)
