// The gradients with their own kernels, as _core._<op>_backward for tests (autograd calls the C++
// functions directly). Results that are not computed come back as None.
#include "bindings/common.h"
#include "core/ops_nn_misc.h"
#include "core/ops_norm.h"

namespace bm::bind {

namespace {

TensorPtr or_null(const std::optional<TensorPtr>& t) { return t ? *t : nullptr; }

py::object or_none(const TensorPtr& t) { return t ? py::cast(t) : py::none(); }

py::tuple grads_tuple(const NormGrads& g) { return py::make_tuple(g.input, or_none(g.weight), or_none(g.bias)); }

}  // namespace

void init_backward(py::module_& m) {
  m.def("_softmax_backward", &softmax_backward, py::arg("grad_output"), py::arg("output"), py::arg("dim"));
  m.def("_log_softmax_backward", &log_softmax_backward, py::arg("grad_output"), py::arg("output"), py::arg("dim"));
  m.def("_gelu_backward", &gelu_backward, py::arg("grad_output"), py::arg("input"));
  m.def("_gelu_tanh_backward", &gelu_tanh_backward, py::arg("grad_output"), py::arg("input"));
  m.def("_silu_backward", &silu_backward, py::arg("grad_output"), py::arg("input"));
  m.def("_relu_backward", &relu_backward, py::arg("grad_output"), py::arg("output"));
  m.def("_layer_norm_backward", [](const TensorPtr& grad_out, const TensorPtr& input, const py::object& normalized_shape,
                                   const std::optional<TensorPtr>& weight, const std::optional<TensorPtr>& bias,
                                   double eps) {
    return grads_tuple(layer_norm_backward(grad_out, input, int_list_arg("layer_norm_backward", normalized_shape),
                                           or_null(weight), or_null(bias), eps));
  }, py::arg("grad_output"), py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(),
     py::arg("bias") = py::none(), py::arg("eps") = 1e-5);
  m.def("_batch_norm_backward", [](const TensorPtr& grad_out, const TensorPtr& input,
                                   const std::optional<TensorPtr>& weight, const std::optional<TensorPtr>& running_mean,
                                   const std::optional<TensorPtr>& running_var, bool training, double eps) {
    return grads_tuple(batch_norm_backward(grad_out, input, or_null(weight), or_null(running_mean),
                                           or_null(running_var), training, eps));
  }, py::arg("grad_output"), py::arg("input"), py::arg("weight") = py::none(), py::arg("running_mean") = py::none(),
     py::arg("running_var") = py::none(), py::arg("training") = true, py::arg("eps") = 1e-5);
  m.def("_nll_loss_backward", [](const TensorPtr& grad_out, const TensorPtr& input, const TensorPtr& target,
                                 const std::optional<TensorPtr>& weight, int64_t ignore_index,
                                 const std::string& reduction) {
    return nll_loss_backward(grad_out, input, target, or_null(weight), ignore_index, reduction);
  }, py::arg("grad_output"), py::arg("input"), py::arg("target"), py::arg("weight") = py::none(),
     py::arg("ignore_index") = -100, py::arg("reduction") = "mean");
}

}  // namespace bm::bind
