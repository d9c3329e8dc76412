// Compute ops: thin argument handling in front of run_op.
#include "core/errors.h"
#include "core/ops.h"
#include "core/ops_elementwise.h"
#include "core/ops_math.h"

namespace bm {

TensorPtr unary(OpId op, const TensorPtr& t) { return run_op(op, {t}); }

TensorPtr binary(OpId op, const Operand& a, const Operand& b) {
  if (op == OpId::floor_divide) return floor_divide(a, b);  // host check of a zero Python-number divisor
  if (op == OpId::remainder) return remainder(a, b);
  if (op == OpId::fmod) return fmod(a, b);
  if (a.is_scalar() && b.is_scalar())
    throw TypeError(std::string("[") + op_row(op).name + "] at least one argument must be a tensor");
  return run_op(op, {a, b});
}

OpArgs clamp_args(const char* op, const TensorPtr& t, std::optional<Scalar> min, std::optional<Scalar> max,
                  DType* result) {
  if (!min && !max) throw ValueError(std::string("[") + op + "] at least one of min and max must be given");
  OpArgs a;
  std::vector<Operand> all{t};
  if (min) { a.s0 = *min; a.has_s0 = true; all.push_back(*min); }
  if (max) { a.s1 = *max; a.has_s1 = true; all.push_back(*max); }
  *result = result_type(all);
  return a;
}

TensorPtr clamp(const TensorPtr& t, std::optional<Scalar> min, std::optional<Scalar> max) {
  DType dt;
  const OpArgs a = clamp_args("clamp", t, min, max, &dt);
  return run_op(OpId::clamp, {dt == t->dtype ? t : cast(t, dt)}, a);
}

TensorPtr where(const Operand& cond, const Operand& a, const Operand& b) {
  if (cond.is_scalar()) throw TypeError("[where] condition must be a tensor");
  return run_op(OpId::where, {cond, a, b});
}

TensorPtr reduce(OpId op, const TensorPtr& t, const Dims& dims, bool keepdim, double correction) {
  OpArgs a;
  a.dims = dims;
  a.keepdim = keepdim;
  a.correction = correction;
  return run_op(op, {t}, a);
}

TensorPtr arg_reduce(OpId op, const TensorPtr& t, std::optional<int64_t> dim, bool keepdim) {
  OpArgs a;
  a.keepdim = keepdim;
  if (dim) {
    a.dims = {*dim};
    return run_op(op, {t}, a);
  }
  // Over the flattened tensor; keepdim keeps every dim as size 1, as torch does.
  TensorPtr flat = reshape(t, {-1});
  a.dims = {0};
  a.keepdim = false;
  TensorPtr r = run_op(op, {flat}, a);
  if (!keepdim) return r;
  return reshape(r, Dims(size_t(t->ndim()), 1));
}

TensorPtr softmax(OpId op, const TensorPtr& t, int64_t dim) {
  OpArgs a;
  a.dim = dim;
  return run_op(op, {t}, a);
}

TensorPtr matmul(const TensorPtr& a_in, const TensorPtr& b_in) {
  // Device and dtype are checked by run_op; shape checks here must not run first, so check the
  // device explicitly before reshaping anything.
  check_same_device("matmul", {{"input", a_in.get()}, {"other", b_in.get()}});
  check_dtype_supported(OpId::matmul, result_type({a_in, b_in}), a_in->device());
  if (a_in->ndim() == 0 || b_in->ndim() == 0)
    throw ValueError("[matmul] both arguments need at least 1 dim, got shapes " + shape_str(a_in->shape) + " and " +
                     shape_str(b_in->shape));
  bool a_vec = a_in->ndim() == 1, b_vec = b_in->ndim() == 1;
  TensorPtr a = a_vec ? unsqueeze(a_in, 0) : a_in;
  TensorPtr b = b_vec ? unsqueeze(b_in, 1) : b_in;
  Shape ab(a->shape.begin(), a->shape.end() - 2), bb(b->shape.begin(), b->shape.end() - 2);
  Shape batch;
  try {
    batch = broadcast_shapes("matmul", ab, bb);
  } catch (const ValueError&) {  // name the full shapes, not just their batch parts
    throw ValueError("[matmul] shapes " + shape_str(a_in->shape) + " and " + shape_str(b_in->shape) +
                     " cannot be multiplied: batch dims " + shape_str(ab) + " and " + shape_str(bb) +
                     " cannot be broadcast together");
  }
  Dims ea = batch, eb = batch;
  ea.push_back(a->shape[a->ndim() - 2]); ea.push_back(a->shape.back());
  eb.push_back(b->shape[b->ndim() - 2]); eb.push_back(b->shape.back());
  if (a->shape.back() != b->shape[b->ndim() - 2])
    throw ValueError("[matmul] shapes " + shape_str(a_in->shape) + " and " + shape_str(b_in->shape) +
                     " cannot be multiplied (" + std::to_string(a->shape.back()) + " != " +
                     std::to_string(b->shape[b->ndim() - 2]) + ")");
  TensorPtr r = run_op(OpId::matmul, {expand(a, ea), expand(b, eb)});
  if (a_vec && b_vec) return squeeze(r, Dims{-1, -2});
  if (a_vec) return squeeze(r, Dims{-2});
  if (b_vec) return squeeze(r, Dims{-1});
  return r;
}

}  // namespace bm
