// The element types a kernel family is instantiated for, as an X-macro: X(metal type, name).
// Names match bessemer's dtype names so the host can build "<kernel>_<dtype>" host names.
#pragma once

// MSL's char is signed (int8); the simulator and the CUDA build compile with signed char too.
#define BM_FOR_EACH_DTYPE(X) \
  X(bool, bool)              \
  X(char, int8)              \
  X(uchar, uint8)            \
  X(short, int16)            \
  X(int, int32)              \
  X(long, int64)             \
  X(half, float16)           \
  X(bfloat, bfloat16)        \
  X(float, float32)

// The same lists passing an extra argument through, X(metal type, name, A), for instantiation
// lists that pair each op with the dtypes of its table row (csrc/core/op_table.h masks, minus
// float64): e.g. BM_DTYPES_FLOAT(INSTANTIATE_UNARY, exp).
#define BM_DTYPES_ALL(X, A) \
  X(bool, bool, A)          \
  BM_DTYPES_NUMERIC(X, A)
#define BM_DTYPES_NUMERIC(X, A) \
  BM_DTYPES_INT(X, A)           \
  BM_DTYPES_FLOAT(X, A)
#define BM_DTYPES_INT(X, A) \
  X(char, int8, A)          \
  X(uchar, uint8, A)        \
  X(short, int16, A)        \
  X(int, int32, A)          \
  X(long, int64, A)
#define BM_DTYPES_FLOAT(X, A) \
  X(half, float16, A)         \
  X(bfloat, bfloat16, A)      \
  X(float, float32, A)
