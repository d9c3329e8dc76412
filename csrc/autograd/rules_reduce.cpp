// Gradient rules of prod, cumsum and cumprod (rows of core/ops_stats.h, core/ops_scan.h), as
// compositions of registry ops, exact where inputs are zero (as torch's):
//   prod:    g * prod / x without zeros; with one zero, only the zero gets g * (product of the
//            others); with two or more, nothing.
//   cumsum:  the reversed cumulative sum of g (flip, cumsum, flip; flip = index_select with a
//            reversed arange, so it is differentiable again).
//   cumprod: positions before a row's first zero: revcumsum(g * out) / x; the first zero:
//            revcumsum(g * cumprod(x with that zero as 1)); after it: 0.
// argsort (integer output) has no rule; sort / topk / median values differentiate through
// take_along_dim's index_select.
#include "autograd/rule_ops.h"
#include "autograd/rules.h"
#include "core/ops_shape.h"
#include "core/ops.h"
#include "core/ops_index.h"
#include "core/ops_scan.h"

namespace bm {

namespace {

using namespace rule_ops;

Grads g_prod(const GradCtx& c) {
  const TensorPtr& x = c.t(0);
  const Dims& dims = c.args.dims;
  TensorPtr g = keepdim_grad(c, c.grad);
  TensorPtr zero = bin(OpId::eq, x, num(0));
  TensorPtr n_zero = reduce(OpId::sum, zero, dims, true);
  TensorPtr safe = where(zero, num(1), x);
  TensorPtr others = reduce(OpId::prod, safe, dims, true);  // product of the nonzero elements
  TensorPtr d = where(bin(OpId::eq, n_zero, inum(0)), bin(OpId::div, others, safe),
                      where(bin(OpId::mul, zero, bin(OpId::eq, n_zero, inum(1))), others, num(0)));
  return {bin(OpId::mul, g, d)};
}

// core/ops_shape.h's flip: index_select with a reversed index (differentiable again; 0-d: x).
TensorPtr rev_cumsum(const TensorPtr& x, int64_t dim) {
  return flip(cumsum(flip(x, {dim}), dim, std::nullopt), {dim});
}

Grads g_cumsum(const GradCtx& c) { return {rev_cumsum(c.grad, c.args.dim)}; }

Grads g_cumprod(const GradCtx& c) {
  const TensorPtr& x = c.t(0);
  const int64_t dim = c.args.dim;
  TensorPtr zero = bin(OpId::eq, x, num(0));
  TensorPtr zeros_so_far = cumsum(zero, dim, std::nullopt);  // int64
  TensorPtr before = bin(OpId::eq, zeros_so_far, inum(0));
  TensorPtr first = bin(OpId::mul, zero, bin(OpId::eq, zeros_so_far, inum(1)));
  TensorPtr g_before = bin(OpId::div, rev_cumsum(bin(OpId::mul, c.grad, c.out), dim), where(before, x, num(1)));
  TensorPtr out1 = cumprod(where(first, num(1), x), dim, std::nullopt);
  TensorPtr g_first = rev_cumsum(bin(OpId::mul, c.grad, out1), dim);
  return {where(before, g_before, where(first, g_first, num(0)))};
}

}  // namespace

void register_reduce_rules(GradRule* t) {
  t[size_t(OpId::prod)] = GradRule{"ProdBackward1", g_prod, kSaveIn0, false};
  t[size_t(OpId::cumsum)] = GradRule{"CumsumBackward0", g_cumsum, 0, false};
  t[size_t(OpId::cumprod)] = GradRule{"CumprodBackward0", g_cumprod, kSaveIn0, true};
}

}  // namespace bm
