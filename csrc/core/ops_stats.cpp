// prod, std, logsumexp, vector_norm, count_nonzero, isclose, allclose, equal: argument handling
// and compositions of registry rows (their gradients come from the rows' rules).
#include "core/ops_stats.h"

#include <cmath>
#include <limits>

#include "autograd/node.h"
#include "core/errors.h"

namespace bm {

namespace {

std::string tag(const char* op) { return std::string("[") + op + "] "; }
Operand num(double v) { return Scalar::from_double(v); }
TensorPtr bin(OpId op, const Operand& a, const Operand& b) { return binary(op, a, b); }

void require_float(const char* op, const TensorPtr& t) {
  if (!is_floating(t->dtype))
    throw UnsupportedError(tag(op) + "expected a floating point input, got " + dtype_name(t->dtype) +
                           "; convert it first, e.g. x.to(bessemer.float32)");
}

// True when one of `dims` (empty: every dim) has size 0: the reduction is over no elements.
bool reduces_nothing(const TensorPtr& t, const Dims& dims) {
  if (dims.empty() || t->ndim() == 0) return t->numel() == 0;  // a 0-d tensor: dim 0 / -1 is every element
  for (int64_t d : dims)
    if (t->shape[size_t(normalize_dim("reduce", d, t->ndim()))] == 0) return true;
  return false;
}

}  // namespace

TensorPtr prod(const TensorPtr& t, std::optional<int64_t> dim, bool keepdim, std::optional<DType> dtype) {
  TensorPtr x = dtype ? cast(t, *dtype) : t;
  if (!dim) return reduce(OpId::prod, x, {}, false);
  return reduce(OpId::prod, x, {*dim}, keepdim);
}

TensorPtr std_dev(const TensorPtr& t, const Dims& dims, double correction, bool keepdim) {
  require_float("std", t);
  return unary(OpId::sqrt, reduce(OpId::var, t, dims, keepdim, correction));
}

TensorPtr logsumexp(const TensorPtr& t_in, const Dims& dims, bool keepdim) {
  TensorPtr t = is_floating(t_in->dtype) ? t_in : cast(t_in, default_float_dtype());
  if (reduces_nothing(t, dims))  // log(0) = -inf, as torch
    return unary(OpId::log, reduce(OpId::sum, unary(OpId::exp, t), dims, keepdim));
  // The maximum only shifts the exponentials; its gradient cancels exactly, so it is detached. An
  // infinite maximum is replaced by 0 (inf - inf would be NaN), as torch does.
  TensorPtr m;
  {
    GradModeGuard no_grad(false);
    m = reduce(OpId::amax, detach(t), dims, true);
    m = where(bin(OpId::eq, unary(OpId::abs, m), num(INFINITY)), num(0), m);
  }
  TensorPtr s = reduce(OpId::sum, unary(OpId::exp, bin(OpId::sub, t, m)), dims, keepdim);
  TensorPtr mk = m;
  if (!keepdim) mk = reshape(m, Dims(s->shape.begin(), s->shape.end()));
  return bin(OpId::add, unary(OpId::log, s), mk);
}

TensorPtr vector_norm(const TensorPtr& t_in, double ord, const Dims& dims, bool keepdim, std::optional<DType> dtype) {
  require_float("linalg.vector_norm", t_in);
  TensorPtr t = dtype ? cast(t_in, *dtype) : t_in;
  if (std::isinf(ord)) {
    if (reduces_nothing(t, dims))
      throw ValueError(tag("linalg.vector_norm") + "the norm of order " + (ord > 0 ? "inf" : "-inf") +
                       " is undefined over zero elements (input shape " + shape_str(t->shape) + ")");
    return reduce(ord > 0 ? OpId::amax : OpId::amin, unary(OpId::abs, t), dims, keepdim);
  }
  if (ord == 0) return cast(reduce(OpId::sum, bin(OpId::ne, t, num(0)), dims, keepdim), t->dtype);
  if (ord == 1) return reduce(OpId::sum, unary(OpId::abs, t), dims, keepdim);
  const bool graph = grad_enabled() && requires_grad(*t);
  TensorPtr powered;
  if (ord == 2) {
    powered = bin(OpId::mul, t, t);
  } else if (ord < 1 && graph) {
    // |x|^p for p < 1 has an infinite derivative at x = 0: torch's gradient there is 0, so a zero
    // element takes the power of 1 and contributes 0 through `where`.
    TensorPtr nz = bin(OpId::ne, t, num(0));
    powered = where(nz, bin(OpId::pow, unary(OpId::abs, where(nz, t, num(1))), num(ord)), num(0));
  } else {
    powered = bin(OpId::pow, unary(OpId::abs, t), num(ord));
  }
  TensorPtr s = reduce(OpId::sum, powered, dims, keepdim);
  auto root = [ord](const TensorPtr& x) { return ord == 2 ? unary(OpId::sqrt, x) : bin(OpId::pow, x, num(1.0 / ord)); };
  if (!graph) return root(s);
  // The root's derivative is infinite at 0, and 0 * inf would make the gradient of a zero vector NaN;
  // torch's is 0 there. So a zero sum takes the root of 1 and the result 0 is chosen by `where`,
  // whose rule sends no gradient to the branch not taken. NaN sums still take the root (NaN != 0).
  TensorPtr nonzero = bin(OpId::ne, s, num(0));
  return where(nonzero, root(where(nonzero, s, num(1))), num(0));
}

TensorPtr count_nonzero(const TensorPtr& t, const Dims& dims) {
  return reduce(OpId::sum, bin(OpId::ne, detach(t), num(0)), dims, false);
}

namespace {

TensorPtr isclose_named(const char* op, const TensorPtr& a, const TensorPtr& b, double rtol, double atol,
                        bool equal_nan) {
  check_same_device(op, {{"input", a.get()}, {"other", b.get()}});
  if (a->dtype != b->dtype)
    throw TypeError(tag(op) + "expected both inputs to have the same dtype, got " + dtype_name(a->dtype) + " and " +
                    dtype_name(b->dtype));
  if (rtol < 0) throw ValueError(tag(op) + "rtol must be greater than or equal to zero, got " + std::to_string(rtol));
  if (atol < 0) throw ValueError(tag(op) + "atol must be greater than or equal to zero, got " + std::to_string(atol));
  broadcast_shapes(op, a->shape, b->shape);  // raises naming this op
  GradModeGuard no_grad(false);
  TensorPtr x = detach(a), y = detach(b);
  TensorPtr close = bin(OpId::eq, x, y);  // exact equality, infinities included
  if (x->dtype == DType::Bool) return close;
  const Operand yes = Scalar::from_bool(true);
  if (equal_nan && is_floating(x->dtype))
    close = where(close, yes, bin(OpId::mul, bin(OpId::ne, x, x), bin(OpId::ne, y, y)));
  // |a - b| <= atol + rtol * |b|, finite differences only (an infinite tolerance must not make
  // inf and -inf close). Integers compute the tolerance in the default float dtype, as torch.
  TensorPtr diff = unary(OpId::abs, bin(OpId::sub, x, y));
  TensorPtr allowed = bin(OpId::add, bin(OpId::mul, unary(OpId::abs, y), num(rtol)), num(atol));
  TensorPtr within = bin(OpId::mul, bin(OpId::le, diff, allowed), bin(OpId::lt, diff, num(INFINITY)));
  return where(close, yes, within);
}

}  // namespace

TensorPtr isclose(const TensorPtr& a, const TensorPtr& b, double rtol, double atol, bool equal_nan) {
  return isclose_named("isclose", a, b, rtol, atol, equal_nan);
}

bool allclose(const TensorPtr& a, const TensorPtr& b, double rtol, double atol, bool equal_nan) {
  TensorPtr c = reduce(OpId::all, isclose_named("allclose", a, b, rtol, atol, equal_nan), {}, false);
  TensorPtr h = to_device(c, cpu_device());
  wait_readable(*h);
  return *h->data<bool>();
}

bool equal(const TensorPtr& a, const TensorPtr& b) {
  check_same_device("equal", {{"input", a.get()}, {"other", b.get()}});
  if (a->shape != b->shape) return false;
  GradModeGuard no_grad(false);
  TensorPtr c = reduce(OpId::all, bin(OpId::eq, detach(a), detach(b)), {}, false);
  TensorPtr h = to_device(c, cpu_device());
  wait_readable(*h);
  return *h->data<bool>();
}

}  // namespace bm
