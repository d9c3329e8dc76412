// Fused optimizer steps for bessemer.optim (python/bessemer/optim): _sgd_step_, _adam_step_.
#include "bindings/common.h"
#include "core/ops_optim.h"

namespace bm::bind {

void init_optim(py::module_& m) {
  m.def("_sgd_step_", [](const TensorPtr& param, const TensorPtr& grad, const py::object& momentum_buffer, double lr,
                         double momentum, double dampening, double weight_decay, bool nesterov, bool maximize) {
    return sgd_step_(param, grad, optional_tensor_arg("sgd_step", "momentum_buffer", momentum_buffer), lr, momentum,
                     dampening, weight_decay, nesterov, maximize);
  }, py::arg("param"), py::arg("grad"), py::arg("momentum_buffer") = py::none(), py::arg("lr") = 1e-3,
     py::arg("momentum") = 0.0, py::arg("dampening") = 0.0, py::arg("weight_decay") = 0.0, py::arg("nesterov") = false,
     py::arg("maximize") = false,
     "One torch.optim.SGD step of `param`, in place. Returns the momentum buffer (a new one when None is given and "
     "momentum != 0; None when momentum == 0).");
  m.def("_adam_step_", [](const TensorPtr& param, const TensorPtr& grad, const TensorPtr& exp_avg,
                          const TensorPtr& exp_avg_sq, const py::object& max_exp_avg_sq, const TensorPtr& step,
                          double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad,
                          bool maximize, bool decoupled_weight_decay) {
    adam_step_(param, grad, exp_avg, exp_avg_sq, optional_tensor_arg("adam_step", "max_exp_avg_sq", max_exp_avg_sq), step,
               lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled_weight_decay);
  }, py::arg("param"), py::arg("grad"), py::arg("exp_avg"), py::arg("exp_avg_sq"), py::arg("max_exp_avg_sq"),
     py::arg("step"), py::arg("lr") = 1e-3, py::arg("beta1") = 0.9, py::arg("beta2") = 0.999, py::arg("eps") = 1e-8,
     py::arg("weight_decay") = 0.0, py::arg("amsgrad") = false, py::arg("maximize") = false,
     py::arg("decoupled_weight_decay") = false,
     "One torch.optim.Adam (AdamW with decoupled_weight_decay=True) step of `param`, in place, updating the state "
     "tensors and incrementing `step` (a 0-d float32 cpu tensor).");
}

}  // namespace bm::bind
