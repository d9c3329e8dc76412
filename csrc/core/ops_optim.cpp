// sgd_step_ and adam_step_: argument checks in front of the sgd_step / adam_step kernels
// (csrc/cpu/optim.cpp, csrc/metal/ops_optim.cpp + shaders/optim.metal).
#include "core/ops_optim.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/errors.h"

namespace bm {

namespace {

using Named = std::vector<std::pair<const char*, const Tensor*>>;

std::string tag(const char* op) { return std::string("[") + op + "] "; }

// named[0] is the parameter; every other tensor must match its device, dtype and shape. Checked
// in the project's order: devices (check_same_device), then dtypes, then shapes, then tensors the
// step writes (all but the gradient, named[1]) whose elements overlap.
void check_dtypes(const char* op, OpId id, const Named& named) {
  const Tensor& p = *named[0].second;
  if (!is_floating(p.dtype))
    throw UnsupportedError(tag(op) + "expected a floating point param, got " + dtype_name(p.dtype));
  check_dtype_supported(id, p.dtype, p.device());
  for (size_t i = 1; i < named.size(); ++i)
    if (named[i].second->dtype != p.dtype)
      throw TypeError(tag(op) + named[i].first + " has dtype " + dtype_name(named[i].second->dtype) +
                      " but param has dtype " + dtype_name(p.dtype) + "; they must match");
}

void check_shapes(const char* op, const Named& named) {
  const Tensor& p = *named[0].second;
  for (size_t i = 1; i < named.size(); ++i)
    if (named[i].second->shape != p.shape)
      throw ValueError(tag(op) + named[i].first + " has shape " + shape_str(named[i].second->shape) +
                       " but param has shape " + shape_str(p.shape) + "; they must match");
  for (size_t i = 0; i < named.size(); ++i) {
    if (i == 1) continue;  // the gradient is only read: a broadcast gradient is fine
    const Tensor& t = *named[i].second;
    if (t.storage->readonly)
      throw Error(tag(op) + named[i].first + " is updated in place but its memory belongs to a read-only NumPy "
                  "array; give the optimizer tensors with their own memory, e.g. bessemer.tensor(array) or .clone()");
    for (size_t d = 0; d < t.shape.size(); ++d)
      if (t.strides[d] == 0 && t.shape[d] > 1)
        throw ValueError(tag(op) + named[i].first + " is updated in place but several of its elements share one "
                         "memory location (a stride of 0, e.g. from expand()); pass a tensor with its own memory, "
                         "e.g. .clone()");
  }
}

}  // namespace

TensorPtr sgd_step_(const TensorPtr& param, const TensorPtr& grad, const TensorPtr& momentum_buffer, double lr,
                    double momentum, double dampening, double weight_decay, bool nesterov, bool maximize) {
  OpScope scope("sgd_step");  // named by OutOfMemoryError
  Named named{{"param", param.get()}, {"grad", grad.get()}};
  const bool use_momentum = momentum != 0;
  if (use_momentum && momentum_buffer) named.push_back({"momentum_buffer", momentum_buffer.get()});
  check_same_device("sgd_step", named);
  check_dtypes("sgd_step", OpId::sgd_step, named);
  check_shapes("sgd_step", named);

  OpArgs a;
  a.out_dtype = param->dtype;
  a.optim.lr = lr;
  a.optim.momentum = momentum;
  a.optim.dampening = dampening;
  a.optim.weight_decay = weight_decay;
  a.optim.nesterov = nesterov;
  a.optim.maximize = maximize;
  TensorPtr buf;
  std::vector<Operand> xs{grad};
  if (use_momentum) {
    a.optim.first_step = !momentum_buffer;  // torch: buf = grad.clone() (after weight decay)
    buf = momentum_buffer ? momentum_buffer : empty_tensor(param->shape, param->dtype, param->device());
    xs.push_back(buf);
  }
  run_op_into(OpId::sgd_step, std::move(xs), a, param);
  if (buf) buf->storage->version++;  // the kernel wrote it in place too (run_op_into bumps only param)
  return buf;
}

void adam_step_(const TensorPtr& param, const TensorPtr& grad, const TensorPtr& exp_avg, const TensorPtr& exp_avg_sq,
                const TensorPtr& max_exp_avg_sq, const TensorPtr& step, double lr, double beta1, double beta2,
                double eps, double weight_decay, bool amsgrad, bool maximize, bool decoupled_weight_decay) {
  OpScope scope("adam_step");  // named by OutOfMemoryError
  if (amsgrad && !max_exp_avg_sq)
    throw ValueError("[adam_step] amsgrad=True needs a max_exp_avg_sq tensor");
  Named named{{"param", param.get()}, {"grad", grad.get()}, {"exp_avg", exp_avg.get()},
              {"exp_avg_sq", exp_avg_sq.get()}};
  if (amsgrad) named.push_back({"max_exp_avg_sq", max_exp_avg_sq.get()});
  check_same_device("adam_step", named);
  // The step count stays on the host, as torch keeps it (non-capturable): reading it never waits
  // for a device queue.
  if (step->device() != cpu_device())
    throw DeviceMismatchError("[adam_step] step must be a 0-d tensor on cpu (the step count stays on the host, as in "
                              "torch), got one on " + step->device()->name);
  check_dtypes("adam_step", OpId::adam_step, named);
  if (step->dtype != DType::Float32 && step->dtype != DType::Float64)
    throw TypeError(std::string("[adam_step] step must be a float32 or float64 tensor, got ") + dtype_name(step->dtype));
  check_shapes("adam_step", named);
  if (!step->shape.empty())
    throw ValueError("[adam_step] step must be a 0-d tensor, got shape " + shape_str(step->shape));
  check_writable("adam_step (the step count)", *step);

  // step_t += 1 in the step tensor's dtype, then torch's Python arithmetic in double.
  wait_readable(*step);
  double t;
  if (step->dtype == DType::Float32) {
    float* s = reinterpret_cast<float*>(step->bytes());
    *s = *s + 1.0f;
    t = *s;
  } else {
    double* s = reinterpret_cast<double*>(step->bytes());
    *s = *s + 1.0;
    t = *s;
  }
  const double bias_correction1 = 1 - std::pow(beta1, t);
  const double bias_correction2 = 1 - std::pow(beta2, t);

  OpArgs a;
  a.out_dtype = param->dtype;
  a.optim.lr = lr;
  a.optim.beta1 = beta1;
  a.optim.beta2 = beta2;
  a.optim.eps = eps;
  a.optim.weight_decay = weight_decay;
  a.optim.amsgrad = amsgrad;
  a.optim.maximize = maximize;
  a.optim.decoupled_weight_decay = decoupled_weight_decay;
  a.optim.step_size = lr / bias_correction1;
  a.optim.bias_correction2_sqrt = std::pow(bias_correction2, 0.5);  // Python's ** 0.5
  std::vector<Operand> xs{grad, exp_avg, exp_avg_sq};
  if (amsgrad) xs.push_back(max_exp_avg_sq);
  run_op_into(OpId::adam_step, std::move(xs), a, param);
  // The kernel wrote the moments in place too (run_op_into bumps only param's version): a tensor
  // saved for backward from their memory must be refused like any other written one.
  exp_avg->storage->version++;
  exp_avg_sq->storage->version++;
  if (amsgrad) max_exp_avg_sq->storage->version++;
}

}  // namespace bm
