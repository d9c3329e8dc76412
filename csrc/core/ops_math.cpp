// floor_divide, remainder, any, all: argument handling in front of run_op.
#include "core/ops_math.h"

#include "core/errors.h"

namespace bm {

namespace {

TensorPtr integer_division(OpId op, const Operand& a, const Operand& b) {
  if (a.is_scalar() && b.is_scalar())
    throw TypeError(std::string("[") + op_row(op).name + "] at least one argument must be a tensor");
  OpArgs args;
  if (b.is_scalar()) {
    // The compute dtype decides whether this is an integer division: `int_tensor // 2.0` is a
    // float division (x // 0.0 gives inf, no error), `int_tensor // 0` raises.
    DType compute = result_type({a, b});
    if (is_integral(compute)) {
      if (b.s.to<int64_t>() == 0)
        throw ZeroDivisionError(std::string("[") + op_row(op).name + "] integer division by zero");
      args.divisor_checked = true;
    }
  }
  return run_op(op, {a, b}, args);
}

}  // namespace

TensorPtr floor_divide(const Operand& a, const Operand& b) { return integer_division(OpId::floor_divide, a, b); }
TensorPtr remainder(const Operand& a, const Operand& b) { return integer_division(OpId::remainder, a, b); }

TensorPtr any(const TensorPtr& t, const Dims& dims, bool keepdim) { return reduce(OpId::any, t, dims, keepdim); }
TensorPtr all(const TensorPtr& t, const Dims& dims, bool keepdim) { return reduce(OpId::all, t, dims, keepdim); }

}  // namespace bm
