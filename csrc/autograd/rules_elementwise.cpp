// Gradient rules of the elementwise math rows (core/ops_elementwise.h), filled into the one table
// of rules_table.cpp by register_elementwise_rules. Compositions of registry ops, as torch's
// derivatives.yaml writes them:
//   log1p: g / (1 + x)        expm1: g (y + 1)          log2 / log10: g / (x ln 2 / ln 10)
//   exp2: g y ln 2            erf: g 2/sqrt(pi) e^-x^2  erfinv: g sqrt(pi)/2 e^(y^2)
//   sign floor ceil round trunc: zero                   frac: g
//   nan_to_num: g where x is finite, else 0
//   atan2(a, b): g b / (a^2 + b^2), -g a / (a^2 + b^2)  hypot(a, b): g a / y, g b / y
//   fmod(a, b): g, -g trunc(a / b)                      lerp(s, e, w): g (1 - w), g w, g (e - s)
// reciprocal and square are compositions of div and mul, whose rules they use.
#include "autograd/rule_ops.h"
#include "autograd/rules.h"
#include "core/ops.h"

namespace bm {

namespace {

using namespace rule_ops;

constexpr double kLn2 = 0.69314718055994530942, kLn10 = 2.30258509299404568402;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390, kSqrtPiOverTwo = 0.88622692545275801365;

// x * x for a tensor or a Python number (a rule may see one number among its inputs).
Operand squared(const Operand& x) {
  if (x.is_scalar()) return Scalar::from_double(x.s.f * x.s.f);
  return mul(x, x);
}

Grads g_log1p(const GradCtx& c) { return {div(c.grad, add(c.t(0), num(1)))}; }
Grads g_expm1(const GradCtx& c) { return {mul(c.grad, add(c.out, num(1)))}; }
Grads g_log2(const GradCtx& c) { return {div(c.grad, mul(c.t(0), num(kLn2)))}; }
Grads g_log10(const GradCtx& c) { return {div(c.grad, mul(c.t(0), num(kLn10)))}; }
Grads g_exp2(const GradCtx& c) { return {mul(c.grad, mul(c.out, num(kLn2)))}; }
Grads g_erf(const GradCtx& c) {
  const TensorPtr& x = c.t(0);
  return {mul(c.grad, mul(exp(mul(mul(x, x), num(-1))), num(kTwoOverSqrtPi)))};
}
Grads g_erfinv(const GradCtx& c) { return {mul(c.grad, mul(exp(mul(c.out, c.out)), num(kSqrtPiOverTwo)))}; }
// Piecewise constant: a zero gradient of the output's shape (torch's zeros_like(grad)).
Grads g_zero(const GradCtx& c) { return {full(c.grad->shape, Scalar::from_int(0), c.grad->dtype, c.grad->device())}; }
Grads g_frac(const GradCtx& c) { return {c.grad}; }
Grads g_nan_to_num(const GradCtx& c) {
  return {where(unary(OpId::isfinite, c.t(0)), c.grad, num(0))};
}

Grads g_atan2(const GradCtx& c) {
  const Operand &a = c.in(0), &b = c.in(1);
  TensorPtr scale = div(c.grad, add(squared(a), squared(b)));
  return {c.need(0) ? mul(scale, b) : nullptr, c.need(1) ? neg(mul(scale, a)) : nullptr};
}
Grads g_hypot(const GradCtx& c) {
  return {c.need(0) ? mul(c.grad, div(c.in(0), c.out)) : nullptr,
          c.need(1) ? mul(c.grad, div(c.in(1), c.out)) : nullptr};
}
Grads g_fmod(const GradCtx& c) {
  TensorPtr gb;
  if (c.need(1)) gb = neg(mul(c.grad, unary(OpId::trunc, div(c.in(0), c.in(1)))));
  return {c.grad, gb};
}
Grads g_lerp(const GradCtx& c) {
  const Operand& w = c.in(2);
  TensorPtr gs, ge, gw;
  if (c.need(0)) gs = mul(c.grad, w.is_scalar() ? num(1 - w.s.f) : Operand(sub(num(1), w)));
  if (c.need(1)) ge = mul(c.grad, w);
  if (c.need(2)) gw = mul(c.grad, sub(c.in(1), c.in(0)));
  return {gs, ge, gw};
}

constexpr unsigned kIn0 = kSaveIn0, kIn01 = kSaveIn0 | kSaveIn1, kIn012 = kSaveIn0 | kSaveIn1 | kSaveIn2;

}  // namespace

void register_elementwise_rules(GradRule* t) {
  auto row = [&](OpId op, const char* name, GradRuleFn fn, unsigned save_in, bool save_out) {
    t[size_t(op)] = GradRule{name, fn, save_in, save_out};
  };
  //   op                 grad_fn name              rule            saves inputs  saves output
  row(OpId::log1p,      "Log1PBackward0",         g_log1p,        kIn0,         false);
  row(OpId::expm1,      "Expm1Backward0",         g_expm1,        0,            true);
  row(OpId::log2,       "Log2Backward0",          g_log2,         kIn0,         false);
  row(OpId::log10,      "Log10Backward0",         g_log10,        kIn0,         false);
  row(OpId::exp2,       "Exp2Backward0",          g_exp2,         0,            true);
  row(OpId::erf,        "ErfBackward0",           g_erf,          kIn0,         false);
  row(OpId::erfinv,     "ErfinvBackward0",        g_erfinv,       0,            true);
  row(OpId::sign,       "SignBackward0",          g_zero,         0,            false);
  row(OpId::floor,      "FloorBackward0",         g_zero,         0,            false);
  row(OpId::ceil,       "CeilBackward0",          g_zero,         0,            false);
  row(OpId::round,      "RoundBackward0",         g_zero,         0,            false);
  row(OpId::trunc,      "TruncBackward0",         g_zero,         0,            false);
  row(OpId::frac,       "FracBackward0",          g_frac,         0,            false);
  row(OpId::nan_to_num, "NanToNumBackward0",      g_nan_to_num,   kIn0,         false);
  row(OpId::atan2,      "Atan2Backward0",         g_atan2,        kIn01,        false);
  row(OpId::hypot,      "HypotBackward0",         g_hypot,        kIn01,        true);
  row(OpId::fmod,       "FmodBackward1",          g_fmod,         kIn01,        false);
  row(OpId::lerp,       "LerpBackward1",          g_lerp,         kIn012,       false);
}

}  // namespace bm
