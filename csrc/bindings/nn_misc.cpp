// dropout, embedding, nll_loss, cross_entropy and linear (python/bessemer/nn/functional.py wraps
// them with torch's signatures).
#include "bindings/common.h"
#include "core/ops_nn_misc.h"

namespace bm::bind {

void init_nn_misc(py::module_& m) {
  m.def("dropout", [](const TensorPtr& input, double p, bool training, const py::object& generator) {
    return dropout(input, p, training, generator.is_none() ? nullptr : generator.cast<Generator*>());
  }, py::arg("input"), py::arg("p") = 0.5, py::arg("training") = true, py::arg("generator") = py::none());
  m.def("embedding", [](const TensorPtr& input, const TensorPtr& weight, const py::object& padding_idx) {
    std::optional<int64_t> pad;
    if (!padding_idx.is_none()) pad = int64_arg("embedding", "padding_idx", padding_idx);
    return embedding(input, weight, pad);
  }, py::arg("input"), py::arg("weight"), py::arg("padding_idx") = py::none());
  m.def("nll_loss", [](const TensorPtr& input, const TensorPtr& target, const py::object& weight, int64_t ignore_index,
                       const std::string& reduction) {
    return nll_loss(input, target, optional_tensor_arg("nll_loss", "weight", weight), ignore_index, reduction);
  }, py::arg("input"), py::arg("target"), py::arg("weight") = py::none(), py::arg("ignore_index") = -100,
     py::arg("reduction") = "mean");
  m.def("cross_entropy", [](const TensorPtr& input, const TensorPtr& target, const py::object& weight,
                            int64_t ignore_index, const std::string& reduction, double label_smoothing) {
    return cross_entropy(input, target, optional_tensor_arg("cross_entropy", "weight", weight), ignore_index, reduction,
                         label_smoothing);
  }, py::arg("input"), py::arg("target"), py::arg("weight") = py::none(), py::arg("ignore_index") = -100,
     py::arg("reduction") = "mean", py::arg("label_smoothing") = 0.0);
  m.def("linear", [](const TensorPtr& input, const TensorPtr& weight, const py::object& bias) {
    return linear(input, weight, optional_tensor_arg("linear", "bias", bias));
  }, py::arg("input"), py::arg("weight"), py::arg("bias") = py::none());
}

}  // namespace bm::bind
