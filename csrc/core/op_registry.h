// Op ids, rows and the kernel calling convention.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/op_table.h"

namespace bm {

struct Tensor;
struct GradRule;

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
  Scalar s2;                      // nan_to_num: the -inf replacement (s0: NaN's, s1: +inf's)
  bool has_s2 = false;
  std::vector<int64_t> dims;      // reduce: sorted, normalized dims (all dims when reducing all)
  bool keepdim = false;
  double correction = 1;          // var
  int64_t dim = 0;                // softmax / log_softmax
  DType out_dtype = DType::Float32;  // Cast / Factory rules
  uint64_t seed = 0, rng_offset = 0;  // uniform / normal: Philox key and first counter block
  // max_pool2d / avg_pool2d (core/ops_nn_pool.cpp): window size, stride, padding, dilation as (h, w);
  // avg_pool2d's count_include_pad and divisor_override (0: none). adaptive_avg_pool2d needs none.
  std::array<int64_t, 2> pool_kernel{}, pool_stride{}, pool_padding{}, pool_dilation{};
  bool pool_count_include_pad = true;
  int64_t pool_divisor = 0;
  double norm_eps = 1e-5;            // layer_norm: added to the variance
  int64_t norm_ndim = 1;             // layer_norm: how many trailing dims are normalised together
  bool norm_weight = false, norm_bias = false;  // layer_norm: inputs 1.. are weight then bias, if given
  double p = 0;                   // dropout: probability of zeroing an element
  int64_t ignore_index = -100;    // nll_loss: targets equal to it contribute nothing
  // conv2d, as (h, w) pairs; conv_padding is the top/left padding (the output shape gives the rest,
  // so padding='same' with an even kernel pads one more at the bottom/right, as torch does).
  std::array<int64_t, 2> conv_stride{1, 1}, conv_padding{0, 0}, conv_dilation{1, 1};
  int64_t conv_groups = 1;
  // backward kernels (h2): batch_norm_backward uses the batch statistics' full formula (training)
  // or only grad * a (evaluation, running statistics).
  bool norm_training = true;
  // optimizers (core/ops_optim.cpp): sgd_step / adam_step hyperparameters, in double as torch's
  // Python code computes them; the kernels round each to their compute dtype where torch does.
  struct Optim {
    double lr = 0, weight_decay = 0;
    double momentum = 0, dampening = 0;         // sgd
    bool nesterov = false, first_step = false;  // sgd: first_step: the buffer := the gradient
    double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;  // adam
    double step_size = 0, bias_correction2_sqrt = 1;  // adam: lr / (1 - beta1^t), sqrt(1 - beta2^t)
    bool amsgrad = false, decoupled_weight_decay = false;  // adam; AdamW decouples
    bool maximize = false;
  } optim;
  // indexing (core/ops_index.cpp): the dim index_select / index_add / index_copy work along.
  // floor_divide / remainder (core/ops_math.cpp): the divisor is a Python number the op layer has
  // already found nonzero, so integer kernels skip their division-by-zero scan.
  int64_t index_dim = 0;
  bool divisor_checked = false;
  // argsort (core/ops_scan.cpp): descending order (NaN first); the dim is args.dim.
  bool descending = false;
};

// The most tensor inputs an op takes (adam_step: grad and three state tensors).
constexpr int kMaxOpInputs = 4;

struct KernelCall {
  std::array<const Tensor*, kMaxOpInputs> in{};
  int nin = 0;
  Tensor* out = nullptr;
  const OpArgs* args = nullptr;
};
using Kernel = void (*)(const KernelCall&);

// A row, built from op_table.h. `grad`: the op's gradient rule (csrc/autograd/rules_table.cpp), null
// for ops that are not differentiable.
struct OpRow {
  const char* name;
  int nin, nout;
  DTypeRule dtype_rule;
  ShapeRule shape_rule;
  DTypeMask dtypes;
  const GradRule* grad = nullptr;
};

const OpRow& op_row(OpId id);
const std::vector<OpRow>& all_ops();

}  // namespace bm
