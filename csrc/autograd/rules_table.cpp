// Every registry op's gradient rule, in one table (the end of this file), as torch's
// derivatives.yaml. Rules are compositions of registry ops, so they run on every backend and are
// themselves recorded under create_graph. Ties and bounds follow torch:
//   relu:        grad where result > 0 (NaN passes the gradient, as threshold_backward)
//   clamp:       grad where min <= x <= max
//   max/minimum: the gradient is split in half between equal inputs
//   amax/amin:   the gradient is split evenly between the tied maxima
//   pow:         d/dbase is 0 where the exponent is 0; d/dexponent is 0 where base == 0 and exponent >= 0
// The rules of the nn ops with backward kernels of their own are in rules_nn.cpp.
#include <array>
#include <cmath>

#include "autograd/rule_ops.h"
#include "autograd/rules.h"
#include "core/errors.h"
#include "core/ops.h"

namespace bm {

namespace {

using namespace rule_ops;
TensorPtr cmp(OpId op, const Operand& a, const Operand& b) { return binary(op, a, b); }
TensorPtr sel(const TensorPtr& c, const Operand& a, const Operand& b) { return where(c, a, b); }

int64_t reduced_count(const GradCtx& c) {
  int64_t n = 1;
  for (int64_t d : c.args.dims) n *= c.geoms[0].shape[size_t(d)];
  return n;
}
TensorPtr expand_to_input(const GradCtx& c, const TensorPtr& g) {
  const Shape& s = c.geoms[0].shape;
  return expand(g, Dims(s.begin(), s.end()));
}

// ---- unary ----
Grads g_copy(const GradCtx& c) { return {c.grad}; }
Grads g_neg(const GradCtx& c) { return {neg(c.grad)}; }
Grads g_abs(const GradCtx& c) {
  const TensorPtr& x = c.t(0);
  TensorPtr sign = sel(cmp(OpId::gt, x, num(0)), num(1), sel(cmp(OpId::lt, x, num(0)), num(-1), mul(x, num(0))));
  return {mul(c.grad, sign)};
}
Grads g_relu(const GradCtx& c) {
  if (!grad_enabled() && is_floating(c.out->dtype)) return {relu_backward(c.grad, c.out)};  // one fused pass
  return {sel(cmp(OpId::le, c.out, num(0)), num(0), c.grad)};
}
Grads g_clamp(const GradCtx& c) {
  const TensorPtr& x = c.t(0);
  TensorPtr keep;
  if (c.args.has_s0) keep = cmp(OpId::ge, x, c.args.s0);
  if (c.args.has_s1) {
    TensorPtr hi = cmp(OpId::le, x, c.args.s1);
    keep = keep ? mul(keep, hi) : hi;
  }
  return {sel(keep, c.grad, num(0))};
}
Grads g_exp(const GradCtx& c) { return {mul(c.grad, c.out)}; }
Grads g_log(const GradCtx& c) { return {div(c.grad, c.t(0))}; }
Grads g_sqrt(const GradCtx& c) { return {div(c.grad, mul(c.out, num(2)))}; }
Grads g_rsqrt(const GradCtx& c) { return {mul(mul(c.grad, num(-0.5)), mul(mul(c.out, c.out), c.out))}; }
Grads g_sin(const GradCtx& c) { return {mul(c.grad, unary(OpId::cos, c.t(0)))}; }
Grads g_cos(const GradCtx& c) { return {mul(c.grad, neg(unary(OpId::sin, c.t(0))))}; }
Grads g_tanh(const GradCtx& c) { return {mul(c.grad, sub(num(1), mul(c.out, c.out)))}; }
Grads g_sigmoid(const GradCtx& c) { return {mul(mul(c.grad, sub(num(1), c.out)), c.out)}; }

// ---- binary ----
Grads g_add(const GradCtx& c) { return {c.grad, c.grad}; }
Grads g_sub(const GradCtx& c) { return {c.grad, c.need(1) ? neg(c.grad) : nullptr}; }
Grads g_mul(const GradCtx& c) {
  return {c.need(0) ? mul(c.grad, c.in(1)) : nullptr, c.need(1) ? mul(c.grad, c.in(0)) : nullptr};
}
Grads g_div(const GradCtx& c) {
  TensorPtr ga = c.need(0) ? div(c.grad, c.in(1)) : nullptr;
  TensorPtr gb;
  if (c.need(1)) {
    const Operand& b = c.in(1);
    gb = neg(div(mul(c.grad, c.in(0)), mul(b, b)));
  }
  return {ga, gb};
}
Grads g_pow(const GradCtx& c) {
  const Operand &a = c.in(0), &b = c.in(1);
  TensorPtr ga, gb;
  if (c.need(0)) {
    TensorPtr d = mul(b, binary(OpId::pow, a, b.is_scalar() ? Operand(Scalar::from_double(b.s.f - 1))
                                                            : Operand(sub(b, num(1)))));
    if (b.is_scalar()) ga = b.s.f == 0 ? mul(c.grad, num(0)) : mul(c.grad, d);
    else ga = mul(c.grad, sel(cmp(OpId::eq, b, num(0)), num(0), d));
  }
  if (c.need(1)) {
    TensorPtr la = a.is_scalar() ? nullptr : unary(OpId::log, a.t);
    TensorPtr d = a.is_scalar() ? mul(c.out, num(std::log(a.s.f))) : mul(c.out, la);
    TensorPtr zero_base = a.is_scalar() ? (a.s.f == 0 ? cmp(OpId::ge, b, num(0)) : nullptr)
                                        : mul(cmp(OpId::eq, a, num(0)), cmp(OpId::ge, b, num(0)));
    gb = mul(c.grad, zero_base ? sel(zero_base, num(0), d) : d);
  }
  return {ga, gb};
}
// maximum (max_first) / minimum: the winner gets the gradient, ties split it in half.
Grads g_extremum(const GradCtx& c, OpId a_loses, OpId b_loses) {
  const Operand &a = c.in(0), &b = c.in(1);
  TensorPtr tie = cmp(OpId::eq, a, b);
  TensorPtr shared = sel(tie, div(c.grad, num(2)), c.grad);
  return {c.need(0) ? sel(cmp(a_loses, a, b), num(0), shared) : nullptr,
          c.need(1) ? sel(cmp(b_loses, a, b), num(0), shared) : nullptr};
}
Grads g_maximum(const GradCtx& c) { return g_extremum(c, OpId::lt, OpId::gt); }
Grads g_minimum(const GradCtx& c) { return g_extremum(c, OpId::gt, OpId::lt); }
// floor_divide is piecewise constant: a zero gradient (torch raises instead). remainder: a - b * floor(a / b).
Grads g_floor_divide(const GradCtx&) { return {nullptr, nullptr}; }
Grads g_remainder(const GradCtx& c) {
  return {c.grad, c.need(1) ? neg(mul(c.grad, binary(OpId::floor_divide, c.in(0), c.in(1)))) : nullptr};
}
Grads g_where(const GradCtx& c) {
  const TensorPtr& cond = c.t(0);
  return {nullptr, c.need(1) ? sel(cond, c.grad, num(0)) : nullptr,
          c.need(2) ? sel(cond, num(0), c.grad) : nullptr};
}

// ---- reductions ----
Grads g_sum(const GradCtx& c) { return {expand_to_input(c, keepdim_grad(c, c.grad))}; }
Grads g_mean(const GradCtx& c) {
  return {expand_to_input(c, div(keepdim_grad(c, c.grad), num(double(reduced_count(c)))))};
}
Grads g_var(const GradCtx& c) {
  const TensorPtr& x = c.t(0);
  TensorPtr centred = sub(x, reduce(OpId::mean, x, c.args.dims, true));
  double scale = 2.0 / (double(reduced_count(c)) - c.args.correction);
  return {mul(mul(keepdim_grad(c, c.grad), num(scale)), centred)};
}
Grads g_amax_amin(const GradCtx& c) {
  const TensorPtr& x = c.t(0);
  TensorPtr hit = cmp(OpId::eq, x, keepdim_grad(c, c.out));
  TensorPtr count = reduce(OpId::sum, hit, c.args.dims, true);
  return {sel(hit, div(keepdim_grad(c, c.grad), count), num(0))};
}

// ---- softmax, matmul, dropout ----
// softmax / log_softmax: the fused backward kernel; under create_graph the same formula composed
// of registry ops, so it can be differentiated again.
Grads g_softmax(const GradCtx& c) {
  if (!grad_enabled()) return {softmax_backward(c.grad, c.out, c.args.dim)};
  TensorPtr dot = reduce(OpId::sum, mul(c.grad, c.out), {c.args.dim}, true);
  return {mul(sub(c.grad, dot), c.out)};
}
Grads g_log_softmax(const GradCtx& c) {
  if (!grad_enabled()) return {log_softmax_backward(c.grad, c.out, c.args.dim)};
  TensorPtr s = reduce(OpId::sum, c.grad, {c.args.dim}, true);
  return {sub(c.grad, mul(unary(OpId::exp, c.out), s))};
}

// ---- activations: backward kernels (which share the forward's float32 formulas); the backward
// rows have rules of their own (the second derivative, composed), for create_graph ----
Grads g_gelu(const GradCtx& c) { return {gelu_backward(c.grad, c.t(0))}; }
Grads g_gelu_tanh(const GradCtx& c) { return {gelu_tanh_backward(c.grad, c.t(0))}; }
Grads g_silu(const GradCtx& c) { return {silu_backward(c.grad, c.t(0))}; }
// inputs (g, x) of act_backward(g, x) = g * act'(x): d/dg = act'(x), d/dx = g * act''(x).
Grads g_gelu_backward(const GradCtx& c) {
  const TensorPtr &g = c.t(0), &x = c.t(1);
  TensorPtr gg = c.need(0) ? gelu_backward(c.grad, x) : nullptr;
  TensorPtr gx;
  if (c.need(1)) {  // gelu'' = phi(x) * (2 - x^2), phi the standard normal density
    TensorPtr phi = mul(unary(OpId::exp, mul(mul(x, x), num(-0.5))), num(0.3989422804014327));
    gx = mul(mul(c.grad, g), mul(phi, sub(num(2), mul(x, x))));
  }
  return {gg, gx};
}
Grads g_gelu_tanh_backward(const GradCtx& c) {
  const TensorPtr &g = c.t(0), &x = c.t(1);
  TensorPtr gg = c.need(0) ? gelu_tanh_backward(c.grad, x) : nullptr;
  TensorPtr gx;
  if (c.need(1)) {  // u = k (x + a x^3), t = tanh u: gelu'' = (1 - t^2) (u' + x/2 (u'' - 2 t u'^2))
    const double k = 0.7978845608028654, a = 0.044715;
    TensorPtr x2 = mul(x, x);
    TensorPtr t = unary(OpId::tanh, mul(add(x, mul(mul(x2, x), num(a))), num(k)));
    TensorPtr du = mul(add(mul(x2, num(3 * a)), num(1)), num(k));
    TensorPtr d2u = mul(x, num(6 * a * k));
    TensorPtr inner = add(du, mul(mul(x, num(0.5)), sub(d2u, mul(mul(t, num(2)), mul(du, du)))));
    gx = mul(mul(c.grad, g), mul(sub(num(1), mul(t, t)), inner));
  }
  return {gg, gx};
}
Grads g_silu_backward(const GradCtx& c) {
  const TensorPtr &g = c.t(0), &x = c.t(1);
  TensorPtr gg = c.need(0) ? silu_backward(c.grad, x) : nullptr;
  TensorPtr gx;
  if (c.need(1)) {  // silu'' = s (1 - s) (2 + x (1 - 2 s))
    TensorPtr sg = unary(OpId::sigmoid, x);
    TensorPtr d2 = mul(mul(sg, sub(num(1), sg)), add(num(2), mul(x, sub(num(1), mul(sg, num(2))))));
    gx = mul(mul(c.grad, g), d2);
  }
  return {gg, gx};
}
// A 2-D operand laid out column-major (a transposed view, as linear's weight.T): its gradient is
// computed transposed, so that after the transpose's own backward it is dense in the weight's order.
bool column_major(const TensorPtr& t) {
  return t->ndim() == 2 && t->strides[0] == 1 && t->shape[0] > 1 && t->strides[1] >= t->shape[0];
}
Grads g_matmul(const GradCtx& c) {
  // The inputs reached the kernel with equal batch dims (matmul expands them; expand's node sums).
  const TensorPtr &a = c.t(0), &b = c.t(1);
  TensorPtr ga, gb;
  if (c.need(0))
    ga = column_major(a) ? transpose(matmul(b, transpose(c.grad, -1, -2)), -1, -2) : matmul(c.grad, transpose(b, -1, -2));
  if (c.need(1))
    gb = column_major(b) ? transpose(matmul(transpose(c.grad, -1, -2), a), -1, -2) : matmul(transpose(a, -1, -2), c.grad);
  return {ga, gb};
}
Grads g_dropout(const GradCtx& c) {
  // The same Philox counters give the same mask for the gradient (it has the input's shape).
  return {run_op(OpId::dropout, {c.grad}, c.args)};
}

constexpr unsigned kIn0 = kSaveIn0, kIn01 = kSaveIn0 | kSaveIn1;

std::array<GradRule, kNumOps> build_table() {
  std::array<GradRule, kNumOps> t{};
  auto row = [&](OpId op, const char* name, GradRuleFn fn, unsigned save_in, bool save_out) {
    t[size_t(op)] = GradRule{name, fn, save_in, save_out};
  };
  //   op                 grad_fn name                rule           saves inputs  saves output
  row(OpId::copy,         "ToCopyBackward0",          g_copy,        0,            false);
  row(OpId::neg,          "NegBackward0",             g_neg,         0,            false);
  row(OpId::abs,          "AbsBackward0",             g_abs,         kIn0,         false);
  row(OpId::relu,         "ReluBackward0",            g_relu,        0,            true);
  row(OpId::clamp,        "ClampBackward1",           g_clamp,       kIn0,         false);
  row(OpId::exp,          "ExpBackward0",             g_exp,         0,            true);
  row(OpId::log,          "LogBackward0",             g_log,         kIn0,         false);
  row(OpId::sqrt,         "SqrtBackward0",            g_sqrt,        0,            true);
  row(OpId::rsqrt,        "RsqrtBackward0",           g_rsqrt,       0,            true);
  row(OpId::sin,          "SinBackward0",             g_sin,         kIn0,         false);
  row(OpId::cos,          "CosBackward0",             g_cos,         kIn0,         false);
  row(OpId::tanh,         "TanhBackward0",            g_tanh,        0,            true);
  row(OpId::sigmoid,      "SigmoidBackward0",         g_sigmoid,     0,            true);
  row(OpId::add,          "AddBackward0",             g_add,         0,            false);
  row(OpId::sub,          "SubBackward0",             g_sub,         0,            false);
  row(OpId::mul,          "MulBackward0",             g_mul,         kIn01,        false);
  row(OpId::div,          "DivBackward0",             g_div,         kIn01,        false);
  row(OpId::pow,          "PowBackward1",             g_pow,         kIn01,        true);
  row(OpId::maximum,      "MaximumBackward0",         g_maximum,     kIn01,        false);
  row(OpId::minimum,      "MinimumBackward0",         g_minimum,     kIn01,        false);
  row(OpId::where,        "WhereBackward0",           g_where,       kIn0,         false);
  row(OpId::floor_divide, "FloorDivideBackward0",     g_floor_divide, 0,           false);
  row(OpId::remainder,    "RemainderBackward1",       g_remainder,   kIn01,        false);
  row(OpId::sum,          "SumBackward1",             g_sum,         0,            false);
  row(OpId::mean,         "MeanBackward1",            g_mean,        0,            false);
  row(OpId::var,          "VarBackward0",             g_var,         kIn0,         false);
  row(OpId::amax,         "AmaxBackward0",            g_amax_amin,   kIn0,         true);
  row(OpId::amin,         "AminBackward0",            g_amax_amin,   kIn0,         true);
  row(OpId::softmax,      "SoftmaxBackward0",         g_softmax,     0,            true);
  row(OpId::log_softmax,  "LogSoftmaxBackward0",      g_log_softmax, 0,            true);
  row(OpId::matmul,       "MmBackward0",              g_matmul,      kIn01,        false);
  row(OpId::dropout,      "NativeDropoutBackward0",   g_dropout,     0,            false);
  row(OpId::gelu,         "GeluBackward0",            g_gelu,        kIn0,         false);
  row(OpId::gelu_tanh,    "GeluBackward0",            g_gelu_tanh,   kIn0,         false);
  row(OpId::silu,         "SiluBackward0",            g_silu,        kIn0,         false);
  row(OpId::gelu_backward,      "GeluBackwardBackward0", g_gelu_backward,      kIn01, false);
  row(OpId::gelu_tanh_backward, "GeluBackwardBackward0", g_gelu_tanh_backward, kIn01, false);
  row(OpId::silu_backward,      "SiluBackwardBackward0", g_silu_backward,      kIn01, false);
  register_nn_rules(t.data());
  register_reduce_rules(t.data());
  register_elementwise_rules(t.data());
  return t;
}

}  // namespace

const GradRule* grad_rule(OpId op) {
  static const std::array<GradRule, kNumOps> table = build_table();
  const GradRule& r = table[size_t(op)];
  return (r.fn || r.recorded_by_op) ? &r : nullptr;
}

}  // namespace bm
