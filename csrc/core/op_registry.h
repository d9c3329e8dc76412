// Op ids, rows and the kernel calling convention.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/op_table.h"

namespace bm {

struct Tensor;

enum class OpId : uint16_t {
#define BM_OP_ENUM(name, nin, nout, dr, sr, dt) name,
  BM_OPS(BM_OP_ENUM)
#undef BM_OP_ENUM
};
constexpr int kNumOps = 0
#define BM_OP_COUNT(name, nin, nout, dr, sr, dt) +1
    BM_OPS(BM_OP_COUNT)
#undef BM_OP_COUNT
    ;

enum class DTypeRule { Same, ToFloat, Promote, PromoteFloat, Compare, Where, SumLike, FloatOnly, Index, Cast, Factory };
enum class ShapeRule { Elementwise, Reduce, SameShape, Matmul, Given };

// A Python number: keeps ints exact (int64) and remembers its kind for type promotion.
struct Scalar {
  enum Kind : uint8_t { Bool, Int, Float } kind = Float;
  double f = 0;
  int64_t i = 0;
  static Scalar from_double(double v) { Scalar s; s.kind = Float; s.f = v; s.i = int64_t(v); return s; }
  static Scalar from_int(int64_t v) { Scalar s; s.kind = Int; s.i = v; s.f = double(v); return s; }
  static Scalar from_bool(bool v) { Scalar s; s.kind = Bool; s.i = v; s.f = v; return s; }
  template <typename T> T to() const;  // exact for integer kinds
};

// Per-call parameters, filled by the op layer; each kernel reads the fields it needs.
struct OpArgs {
  Scalar s0, s1;                  // fill value; arange start/step; clamp min/max
  bool has_s0 = false, has_s1 = false;
  std::vector<int64_t> dims;      // reduce: sorted, normalized dims (all dims when reducing all)
  bool keepdim = false;
  double correction = 1;          // var
  int64_t dim = 0;                // softmax / log_softmax
  DType out_dtype = DType::Float32;  // Cast / Factory rules
  uint64_t seed = 0, rng_offset = 0;  // uniform / normal: Philox key and first counter block
  // conv2d, as (h, w) pairs; conv_padding is the top/left padding (the output shape gives the rest,
  // so padding='same' with an even kernel pads one more at the bottom/right, as torch does).
  std::array<int64_t, 2> conv_stride{1, 1}, conv_padding{0, 0}, conv_dilation{1, 1};
  int64_t conv_groups = 1;
};

struct KernelCall {
  std::array<const Tensor*, 3> in{};
  int nin = 0;
  Tensor* out = nullptr;
  const OpArgs* args = nullptr;
};
using Kernel = void (*)(const KernelCall&);

// A row, built from op_table.h. `grad` is where autograd's rule will go.
struct OpRow {
  const char* name;
  int nin, nout;
  DTypeRule dtype_rule;
  ShapeRule shape_rule;
  DTypeMask dtypes;
  void* grad = nullptr;
};

const OpRow& op_row(OpId id);
const std::vector<OpRow>& all_ops();

}  // namespace bm
