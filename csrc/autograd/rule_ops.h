// Shorthands the gradient rule files compose their formulas with (rules_table.cpp,
// rules_elementwise.cpp, rules_reduce.cpp): registry ops under short names, so a rule reads like
// its formula. Each rule file says `using namespace rule_ops;` in its own anonymous namespace.
#pragma once
#include <vector>

#include "autograd/rules.h"
#include "core/ops.h"

namespace bm::rule_ops {

using Grads = std::vector<TensorPtr>;
inline Operand num(double v) { return Scalar::from_double(v); }
inline Operand inum(int64_t v) { return Scalar::from_int(v); }
inline TensorPtr bin(OpId op, const Operand& a, const Operand& b) { return binary(op, a, b); }
inline TensorPtr mul(const Operand& a, const Operand& b) { return binary(OpId::mul, a, b); }
inline TensorPtr div(const Operand& a, const Operand& b) { return binary(OpId::div, a, b); }
inline TensorPtr add(const Operand& a, const Operand& b) { return binary(OpId::add, a, b); }
inline TensorPtr sub(const Operand& a, const Operand& b) { return binary(OpId::sub, a, b); }
inline TensorPtr neg(const TensorPtr& a) { return unary(OpId::neg, a); }
inline TensorPtr exp(const TensorPtr& a) { return unary(OpId::exp, a); }

// The gradient of a reduction's output, shaped with the reduced dims kept (size 1).
inline TensorPtr keepdim_grad(const GradCtx& c, const TensorPtr& g) {
  if (c.args.keepdim) return g;
  Shape k = c.geoms[0].shape;
  for (int64_t d : c.args.dims) k[size_t(d)] = 1;
  return reshape(g, Dims(k.begin(), k.end()));
}

}  // namespace bm::rule_ops
