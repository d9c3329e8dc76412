// dropout, embedding, nll_loss, cross_entropy, linear. Each checks, in this order: devices of all
// tensor arguments, dtypes, shapes, then index values; only then does it launch anything, so a
// bad call raises before any work is queued and leaves every tensor untouched.
#include "core/ops_nn_misc.h"
#include "autograd/record.h"
#include "autograd/rules_nn.h"

#include <cmath>
#include <sstream>

#include "core/backend.h"
#include "core/errors.h"

namespace bm {

namespace {

std::string tag(const char* op) { return std::string("[") + op + "] "; }

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

bool is_index_dtype(DType d) { return d == DType::Int32 || d == DType::Int64; }

// The first element (in logical order) of an int32/int64 tensor outside [0, n) and not equal to
// `ignore`. Indices are validated on the host, before the gather is queued: on Metal this waits
// for the work that produces them (nothing, when they were uploaded from host data), and it
// costs no extra launch and no flag buffer. A GPU-side flag would have to be read back after the
// gather anyway — the same wait, later — and the error is better raised before any launch.
template <typename I>
std::optional<int64_t> find_bad(const Tensor& t, int64_t n, std::optional<int64_t> ignore) {
  const I* base = t.data<I>();
  const int64_t nd = t.ndim();
  std::vector<int64_t> idx(size_t(nd), 0);
  int64_t pos = 0;
  for (int64_t count = t.numel(); count > 0; --count) {
    const int64_t v = int64_t(base[pos]);
    if ((v < 0 || v >= n) && !(ignore && v == *ignore)) return v;
    for (int64_t d = nd - 1; d >= 0; --d) {  // odometer step to the next logical element
      pos += t.strides[size_t(d)];
      if (++idx[size_t(d)] < t.shape[size_t(d)]) break;
      pos -= t.strides[size_t(d)] * t.shape[size_t(d)];
      idx[size_t(d)] = 0;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> find_bad_index(const Tensor& t, int64_t n, std::optional<int64_t> ignore = std::nullopt) {
  if (t.numel() == 0) return std::nullopt;
  wait_readable(t);
  return t.dtype == DType::Int32 ? find_bad<int32_t>(t, n, ignore) : find_bad<int64_t>(t, n, ignore);
}

enum class Reduction { None, Mean, Sum };

Reduction reduction_arg(const char* op, const std::string& r) {
  if (r == "none") return Reduction::None;
  if (r == "mean") return Reduction::Mean;
  if (r == "sum") return Reduction::Sum;
  throw ValueError(tag(op) + "'" + r + "' is not a valid value for reduction (expected 'none', 'mean' or 'sum')");
}

TensorPtr sum_all(const TensorPtr& t) { return reduce(OpId::sum, t, {}, false); }

// Where the class dim is: 0 for a single sample (C,), else 1 (N, C, d1, ...).
int64_t class_dim(const Tensor& input) { return input.ndim() == 1 ? 0 : 1; }

// The class-index target shape for `input`: () for (C,), else the input's shape without dim 1.
Shape index_target_shape(const Tensor& input) {
  Shape s = input.shape;
  s.erase(s.begin() + class_dim(input));
  return s;
}

// Shapes and dtypes shared by nll_loss and cross_entropy's class-index path.
void check_index_target(const char* op, const Tensor& input, const Tensor& target) {
  if (!is_index_dtype(target.dtype))
    throw TypeError(tag(op) + "expected a target of int64 class indices, got " + dtype_name(target.dtype));
  Shape want = index_target_shape(input);
  if (target.shape != want)
    throw ValueError(tag(op) + "expected a target of shape " + shape_str(want) + " for input of shape " +
                     shape_str(input.shape) + ", got " + shape_str(target.shape));
}

// input (C,) or (N, C, d...): at least 1 dim; weight, when given, a floating 1-D tensor of C values.
void check_input_and_weight(const char* op, const Tensor& input, const TensorPtr& weight) {
  if (input.ndim() < 1) throw ValueError(tag(op) + "expected an input with at least 1 dim, got shape " + shape_str(input.shape));
  if (!weight) return;
  int64_t c = input.shape[size_t(class_dim(input))];
  if (!is_floating(weight->dtype))
    throw TypeError(tag(op) + "expected a floating point weight, got " + dtype_name(weight->dtype));
  if (weight->shape != Shape{c})
    throw ValueError(tag(op) + "weight must have one value per class (shape " + shape_str(Shape{c}) + "), got shape " +
                     shape_str(weight->shape));
}

void check_floating_input(const char* op, const Tensor& input) {
  if (!is_floating(input.dtype))
    throw UnsupportedError(tag(op) + "expected a floating point input, got " + dtype_name(input.dtype) +
                           "; convert it first, e.g. x.to(bessemer.float32)");
  check_dtype_supported(OpId::nll_loss, input.dtype, input.device());
}

void check_targets_in_range(const char* op, const Tensor& input, const Tensor& target, int64_t ignore_index) {
  int64_t c = input.shape[size_t(class_dim(input))];
  if (auto bad = find_bad_index(target, c, ignore_index))
    throw IndexError(tag(op) + "target " + std::to_string(*bad) + " is out of bounds for " + std::to_string(c) +
                     " classes (expected in [0, " + std::to_string(c) + ") or ignore_index " +
                     std::to_string(ignore_index) + ")");
}

// Per-target gather of the nll_loss kernel: -w[t] * src[class t], 0 where t == ignore_index.
TensorPtr nll_gather(const TensorPtr& src, const TensorPtr& target, const TensorPtr& weight, int64_t ignore_index) {
  OpArgs a;
  a.out_dtype = src->dtype;
  a.ignore_index = ignore_index;
  TensorPtr out = empty_tensor(target->shape, src->dtype, src->device());
  std::vector<Operand> ins{src, target};
  if (weight) ins.push_back(weight);
  run_op_into(OpId::nll_loss, ins, a, out);
  return out;
}

// The 'mean' divisor: the summed weights of the targets that are not ignored (their count
// without a weight). The weights come from the same gather as the losses, applied to -1s.
TensorPtr target_weight_total(const TensorPtr& input, const TensorPtr& target, const TensorPtr& weight,
                              int64_t ignore_index) {
  if (!weight) return sum_all(binary(OpId::ne, target, Scalar::from_int(ignore_index)));
  TensorPtr minus_one = expand(full({}, Scalar::from_int(-1), input->dtype, input->device()), input->shape);
  return sum_all(nll_gather(minus_one, target, weight, ignore_index));
}

// sum(x) / d; half types sum and divide in float32 and round once at the end.
TensorPtr mean_by(const TensorPtr& x, const TensorPtr& d) {
  bool low = x->dtype == DType::Float16 || x->dtype == DType::BFloat16;
  TensorPtr xs = low ? cast(x, DType::Float32) : x;
  TensorPtr ds = low && is_floating(d->dtype) ? cast(d, DType::Float32) : d;
  TensorPtr r = binary(OpId::div, sum_all(xs), ds);
  return low ? cast(r, x->dtype) : r;
}

TensorPtr reduce_losses(const TensorPtr& losses, Reduction red, const TensorPtr& input, const TensorPtr& target,
                        const TensorPtr& weight, int64_t ignore_index) {
  if (red == Reduction::None) return losses;
  if (red == Reduction::Sum) return sum_all(losses);
  return mean_by(losses, target_weight_total(input, target, weight, ignore_index));
}

// nll_gather then the reduction, recorded as one op whose backward is the nll_loss_backward kernel.
TensorPtr nll_reduced(const TensorPtr& input, const TensorPtr& t, const TensorPtr& w, int64_t ignore_index,
                      Reduction red, const std::string& reduction) {
  const bool record = should_record({&input});  // as torch, the class weights get no gradient
  TensorPtr out;
  {
    GradModeGuard off(false);
    out = reduce_losses(nll_gather(input, t, w, ignore_index), red, input, t, w, ignore_index);
  }
  if (record) record_nll_loss(input, t, w, ignore_index, reduction, out);
  return out;
}

TensorPtr to_int64(const TensorPtr& t) { return t->dtype == DType::Int64 ? t : cast(t, DType::Int64); }

TensorPtr weight_as(const TensorPtr& weight, DType d) {
  return !weight || weight->dtype == d ? weight : cast(weight, d);
}

// weight (C,) viewed to broadcast along input's class dim: (1, C, 1, ...) or (C,).
TensorPtr weight_along_classes(const TensorPtr& weight, const Tensor& input) {
  Dims s(size_t(input.ndim()), 1);
  s[size_t(class_dim(input))] = weight->shape[0];
  return reshape(weight, s);
}

}  // namespace

TensorPtr dropout(const TensorPtr& input, double p, bool training, Generator* gen) {
  OpScope scope("dropout");  // named by OutOfMemoryError
  if (!(p >= 0 && p <= 1))
    throw ValueError("[dropout] dropout probability has to be between 0 and 1, but got " + num(p));
  if (!training) return input;
  if (gen && gen->device != input->device())
    throw DeviceMismatchError("[dropout] inputs are on different devices: input on " + input->device()->name +
                              ", generator on " + gen->device->name);
  if (!is_floating(input->dtype))
    throw UnsupportedError("[dropout] expected a floating point input, got " + std::string(dtype_name(input->dtype)));
  check_dtype_supported(OpId::dropout, input->dtype, input->device());
  if (p == 0) return clone(input);
  if (p == 1) return binary(OpId::mul, input, Scalar::from_double(0.0));  // as torch: NaN * 0 stays NaN
  if (!gen) gen = &default_generator(input->device());
  OpArgs a;
  a.p = p;
  auto [seed, first] = gen->reserve(input->numel());
  a.seed = seed;
  a.rng_offset = first;
  return run_op(OpId::dropout, {input}, a);
}

TensorPtr embedding(const TensorPtr& input, const TensorPtr& weight, std::optional<int64_t> padding_idx) {
  OpScope scope("embedding");  // named by OutOfMemoryError
  check_same_device("embedding", {{"input", input.get()}, {"weight", weight.get()}});
  if (!is_index_dtype(input->dtype))
    throw TypeError("[embedding] expected input of int32 or int64 indices, got " + std::string(dtype_name(input->dtype)));
  check_dtype_supported(OpId::embedding, weight->dtype, weight->device());
  if (weight->ndim() != 2)
    throw ValueError("[embedding] weight must be 2-D (num_embeddings, embedding_dim), got shape " +
                     shape_str(weight->shape));
  const int64_t n = weight->shape[0];
  if (padding_idx && (*padding_idx < -n || *padding_idx >= n))
    throw ValueError("[embedding] padding_idx " + std::to_string(*padding_idx) + " must be within num_embeddings (" +
                     std::to_string(n) + ")");
  if (auto bad = find_bad_index(*input, n))
    throw IndexError("[embedding] index " + std::to_string(*bad) + " is out of range for a weight of " +
                     std::to_string(n) + " rows (expected in [0, " + std::to_string(n) + "))");
  Shape s = input->shape;
  s.push_back(weight->shape[1]);
  TensorPtr out = empty_tensor(s, weight->dtype, weight->device());
  OpArgs a;
  a.out_dtype = weight->dtype;
  run_op_into(OpId::embedding, {input, weight}, a, out);
  if (should_record({&weight})) {
    std::optional<int64_t> pad = padding_idx;
    if (pad && *pad < 0) *pad += weight->shape[0];
    record_embedding(input, weight, pad, out);
  }
  return out;
}

TensorPtr nll_loss(const TensorPtr& input, const TensorPtr& target, const TensorPtr& weight, int64_t ignore_index,
                   const std::string& reduction) {
  OpScope scope("nll_loss");  // named by OutOfMemoryError
  std::vector<std::pair<const char*, const Tensor*>> named{{"input", input.get()}, {"target", target.get()}};
  if (weight) named.push_back({"weight", weight.get()});
  check_same_device("nll_loss", named);
  check_floating_input("nll_loss", *input);
  Reduction red = reduction_arg("nll_loss", reduction);
  check_input_and_weight("nll_loss", *input, weight);
  check_index_target("nll_loss", *input, *target);
  check_targets_in_range("nll_loss", *input, *target, ignore_index);
  TensorPtr t = to_int64(target), w = weight_as(weight, input->dtype);
  return nll_reduced(input, t, w, ignore_index, red, reduction);
}

TensorPtr nll_loss_backward(const TensorPtr& grad_out, const TensorPtr& input, const TensorPtr& target,
                            const TensorPtr& weight, int64_t ignore_index, const std::string& reduction) {
  OpScope scope("nll_loss_backward");  // named by OutOfMemoryError
  const char* op = "nll_loss_backward";
  std::vector<std::pair<const char*, const Tensor*>> named{
      {"grad_output", grad_out.get()}, {"input", input.get()}, {"target", target.get()}};
  if (weight) named.push_back({"weight", weight.get()});
  check_same_device(op, named);
  if (!is_floating(input->dtype) || !is_floating(grad_out->dtype))
    throw UnsupportedError(tag(op) + "expected floating point input and grad_output, got " +
                           dtype_name(input->dtype) + " and " + dtype_name(grad_out->dtype));
  check_dtype_supported(OpId::nll_loss_backward, input->dtype, input->device());
  Reduction red = reduction_arg(op, reduction);
  check_input_and_weight(op, *input, weight);
  check_index_target(op, *input, *target);
  const Shape want = red == Reduction::None ? target->shape : Shape{};
  if (grad_out->shape != want)
    throw ValueError(tag(op) + "expected grad_output of shape " + shape_str(want) + " for reduction '" + reduction +
                     "', got " + shape_str(grad_out->shape));
  TensorPtr out = empty_tensor(input->shape, input->dtype, input->device());
  if (out->numel() == 0) return out;
  const DType dt = input->dtype;
  TensorPtr t = to_int64(target), w = weight_as(weight, dt), g = grad_out;
  if (red == Reduction::Mean) {
    // grad / total weight, in float32 for the half types (as mean_by divides in the forward)
    const bool low = dt == DType::Float16 || dt == DType::BFloat16;
    const DType cd = low ? DType::Float32 : dt;
    g = binary(OpId::div, cast(grad_out, cd), cast(target_weight_total(input, t, w, ignore_index), cd));
  }
  OpArgs a;
  a.out_dtype = dt;
  a.ignore_index = ignore_index;
  std::vector<Operand> ins{expand(cast(g, dt), target->shape), t};
  if (w) ins.push_back(w);
  run_op_into(OpId::nll_loss_backward, ins, a, out);
  return out;
}

TensorPtr cross_entropy(const TensorPtr& input, const TensorPtr& target, const TensorPtr& weight,
                        int64_t ignore_index, const std::string& reduction, double label_smoothing) {
  OpScope scope("cross_entropy");  // named by OutOfMemoryError
  const char* op = "cross_entropy";
  std::vector<std::pair<const char*, const Tensor*>> named{{"input", input.get()}, {"target", target.get()}};
  if (weight) named.push_back({"weight", weight.get()});
  check_same_device(op, named);
  check_floating_input(op, *input);
  Reduction red = reduction_arg(op, reduction);
  if (!(label_smoothing >= 0 && label_smoothing <= 1))
    throw ValueError("[cross_entropy] label_smoothing must be between 0.0 and 1.0, got " + num(label_smoothing));
  check_input_and_weight(op, *input, weight);
  const int64_t cd = class_dim(*input), n_classes = input->shape[size_t(cd)];
  const TensorPtr w = weight_as(weight, input->dtype);

  if (target->shape == input->shape) {
    // Class probabilities (torch: a target shaped like the input): -sum(log p * target [* w]).
    if (!is_floating(target->dtype))
      throw TypeError("[cross_entropy] expected a floating point target for class probabilities, got " +
                      std::string(dtype_name(target->dtype)));
    if (ignore_index >= 0)
      throw ValueError("[cross_entropy] ignore_index is not supported for class-probability targets");
    TensorPtr logp = softmax(OpId::log_softmax, input, cd);
    TensorPtr tgt = target;
    if (label_smoothing > 0)
      tgt = binary(OpId::add, binary(OpId::mul, target, Scalar::from_double(1 - label_smoothing)),
                   Scalar::from_double(label_smoothing / double(n_classes)));
    TensorPtr prod = binary(OpId::mul, logp, tgt);
    if (w) prod = binary(OpId::mul, prod, weight_along_classes(w, *input));
    if (red == Reduction::None) return unary(OpId::neg, reduce(OpId::sum, prod, {cd}, false));
    if (red == Reduction::Sum) return unary(OpId::neg, sum_all(prod));
    if (input->numel() == 0) return full({}, Scalar::from_double(NAN), prod->dtype, input->device());
    return unary(OpId::neg, mean_by(prod, scalar_tensor(Scalar::from_int(input->numel() / n_classes), DType::Int64,
                                                        input->device())));
  }

  // Class indices.
  if (!is_index_dtype(target->dtype))
    throw TypeError("[cross_entropy] expected a target of int64 class indices of shape " +
                    shape_str(index_target_shape(*input)) + " or of class probabilities of the input's shape " +
                    shape_str(input->shape) + ", got a " + dtype_name(target->dtype) + " target of shape " +
                    shape_str(target->shape));
  check_index_target(op, *input, *target);
  check_targets_in_range(op, *input, *target, ignore_index);
  TensorPtr t = to_int64(target);
  TensorPtr logp = softmax(OpId::log_softmax, input, cd);
  TensorPtr nll = nll_reduced(logp, t, w, ignore_index, red, reduction);
  if (label_smoothing == 0) return nll;
  // torch's label smoothing: (1 - eps) * nll + eps / C * (the loss against a uniform target),
  // where the uniform part is -sum_c(w_c * log p_c), zero at ignored targets, reduced like nll.
  TensorPtr per_class = w ? binary(OpId::mul, logp, weight_along_classes(w, *input)) : logp;
  TensorPtr smooth = unary(OpId::neg, reduce(OpId::sum, per_class, {cd}, false));
  smooth = where(binary(OpId::ne, t, Scalar::from_int(ignore_index)), smooth, Scalar::from_double(0.0));
  TensorPtr ret = reduce_losses(smooth, red, input, t, w, ignore_index);
  return binary(OpId::add, binary(OpId::mul, nll, Scalar::from_double(1 - label_smoothing)),
                binary(OpId::mul, ret, Scalar::from_double(label_smoothing / double(n_classes))));
}

TensorPtr linear(const TensorPtr& input, const TensorPtr& weight, const TensorPtr& bias) {
  OpScope scope("linear");  // named by OutOfMemoryError
  std::vector<std::pair<const char*, const Tensor*>> named{{"input", input.get()}, {"weight", weight.get()}};
  if (bias) named.push_back({"bias", bias.get()});
  check_same_device("linear", named);
  check_dtype_supported(OpId::matmul, result_type({input, weight}), input->device());
  if (input->ndim() < 1 || weight->ndim() < 1 || weight->ndim() > 2)
    throw ValueError("[linear] expected an input with at least 1 dim and a 1-D or 2-D weight, got shapes " +
                     shape_str(input->shape) + " and " + shape_str(weight->shape));
  const int64_t k = weight->shape.back();
  if (input->shape.back() != k)
    throw ValueError("[linear] input of shape " + shape_str(input->shape) + " and weight of shape " +
                     shape_str(weight->shape) + " cannot be multiplied (" + std::to_string(input->shape.back()) +
                     " input features, the weight takes " + std::to_string(k) + ")");
  Shape out_shape(input->shape.begin(), input->shape.end() - 1);
  if (weight->ndim() == 2) out_shape.push_back(weight->shape[0]);
  if (bias) {
    bool ok = false;
    try {
      ok = broadcast_shapes("linear", out_shape, bias->shape) == out_shape;
    } catch (const ValueError&) {
    }
    if (!ok)
      throw ValueError("[linear] bias of shape " + shape_str(bias->shape) + " does not broadcast to the output shape " +
                       shape_str(out_shape));
  }
  TensorPtr wt = weight->ndim() == 2 ? transpose(weight, 0, 1) : weight;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < input->shape.size(); ++d) rows *= input->shape[d];
  TensorPtr y;
  if (rows == 1 && weight->ndim() == 2) {
    // A single sample (batch-1 inference): weight @ x, a matrix-vector product, is about twice as
    // fast as x @ weight.T with one row.
    y = reshape(matmul(weight, reshape(input, {k})), out_shape);
  } else if (input->ndim() > 2) {
    // One (rows, K) @ (K, out) product instead of a batch of small ones.
    y = reshape(matmul(reshape(input, {rows, k}), wt), out_shape);
  } else {
    y = matmul(input, wt);
  }
  if (!bias) return y;
  // y is a fresh tensor: add the bias in place when that keeps y's dtype.
  if (result_type({y, bias}) == y->dtype && !(grad_enabled() && (requires_grad(*y) || requires_grad(*bias)))) {
    run_op_into(OpId::add, {y, bias}, OpArgs{}, y);
    return y;
  }
  return binary(OpId::add, y, bias);
}

}  // namespace bm
