// Normalisation ops for bessemer.nn.functional: layer_norm, batch_norm. (gelu, gelu_tanh and silu
// are table rows, bound with the other unary ops in ops.cpp.)
#include "bindings/common.h"
#include "core/ops_norm.h"

namespace bm::bind {

namespace {
TensorPtr or_null(const std::optional<TensorPtr>& t) { return t ? *t : nullptr; }
}  // namespace

void init_norm(py::module_& m) {
  m.def("layer_norm", [](const TensorPtr& input, const py::object& normalized_shape,
                         const std::optional<TensorPtr>& weight, const std::optional<TensorPtr>& bias, double eps) {
    return layer_norm(input, int_list_arg("layer_norm", normalized_shape), or_null(weight), or_null(bias), eps);
  }, py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(), py::arg("bias") = py::none(),
     py::arg("eps") = 1e-5);
  m.def("batch_norm", [](const TensorPtr& input, const std::optional<TensorPtr>& running_mean,
                         const std::optional<TensorPtr>& running_var, const std::optional<TensorPtr>& weight,
                         const std::optional<TensorPtr>& bias, bool training, double momentum, double eps) {
    return batch_norm(input, or_null(running_mean), or_null(running_var), or_null(weight), or_null(bias), training,
                      momentum, eps);
  }, py::arg("input"), py::arg("running_mean"), py::arg("running_var"), py::arg("weight") = py::none(),
     py::arg("bias") = py::none(), py::arg("training") = false, py::arg("momentum") = 0.1, py::arg("eps") = 1e-5);
}

}  // namespace bm::bind
