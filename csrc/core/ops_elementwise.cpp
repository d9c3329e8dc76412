// round(decimals), nan_to_num, lerp, fmod, reciprocal, square: argument handling in front of run_op.
#include "core/ops_elementwise.h"

#include "core/errors.h"

namespace bm {

TensorPtr round_decimals(const TensorPtr& t, int64_t decimals) {
  OpArgs a;
  if (decimals != 0) {
    if (!is_floating(t->dtype))
      throw UnsupportedError(std::string("[round] decimals is only supported for floating point inputs, got ") +
                             dtype_name(t->dtype));
    a.s0 = Scalar::from_int(decimals);
    a.has_s0 = true;
  }
  return run_op(OpId::round, {t}, a);
}

TensorPtr nan_to_num(const TensorPtr& t, double nan, std::optional<double> posinf, std::optional<double> neginf) {
  OpArgs a;
  a.s0 = Scalar::from_double(nan);
  a.has_s0 = true;
  if (posinf) { a.s1 = Scalar::from_double(*posinf); a.has_s1 = true; }
  if (neginf) { a.s2 = Scalar::from_double(*neginf); a.has_s2 = true; }
  return run_op(OpId::nan_to_num, {t}, a);
}

TensorPtr lerp(const TensorPtr& input, const TensorPtr& end, const Operand& weight) {
  // Devices first (the dispatcher would name the weight "arg"), then torch's dtype checks.
  std::vector<std::pair<const char*, const Tensor*>> named{{"input", input.get()}, {"end", end.get()}};
  if (!weight.is_scalar()) named.push_back({"weight", weight.t.get()});
  check_same_device("lerp", named);
  auto expect = [&](const char* what, DType d) {
    if (d != input->dtype)
      throw TypeError(std::string("[lerp] expected dtype ") + dtype_name(input->dtype) + " for " + what + " but got " +
                      dtype_name(d));
  };
  expect("end", end->dtype);
  if (!is_floating(input->dtype))  // a number weight would promote integers to float: refuse first, as torch
    throw UnsupportedError(std::string("[lerp] expected a floating point input, got ") + dtype_name(input->dtype));
  if (weight.is_scalar()) return run_op(OpId::lerp, {input, end, weight});
  if (weight.t->ndim() > 0) {
    expect("weight", weight.t->dtype);
    return run_op(OpId::lerp, {input, end, weight});
  }
  // A 0-d weight tensor is a scalar weight of any dtype: in input's dtype, it cannot promote.
  const TensorPtr& w = weight.t;
  return run_op(OpId::lerp, {input, end, w->dtype == input->dtype ? w : cast(w, input->dtype)});
}

TensorPtr fmod(const Operand& a, const Operand& b) {
  if (a.is_scalar() && b.is_scalar()) throw TypeError("[fmod] at least one argument must be a tensor");
  OpArgs args;
  // The compute dtype decides whether this is an integer division (`int_tensor % 2.0` is not).
  if (b.is_scalar() && is_integral(result_type({a, b}))) {
    if (b.s.to<int64_t>() == 0) throw ZeroDivisionError("[fmod] integer division by zero");
    args.divisor_checked = true;
  }
  return run_op(OpId::fmod, {a, b}, args);
}

TensorPtr reciprocal(const TensorPtr& t) { return binary(OpId::div, Scalar::from_double(1.0), t); }

TensorPtr square(const TensorPtr& t) {
  const TensorPtr x = t->dtype == DType::Bool ? cast(t, DType::Int64) : t;
  return binary(OpId::mul, x, x);
}

}  // namespace bm
