// conv2d: torch.nn.functional.conv2d's signature. Argument values are checked in C++ (after the
// device and dtype checks); here they are only converted.
#include "bindings/common.h"
#include "core/errors.h"
#include "core/ops_conv.h"

namespace bm::bind {

void init_conv(py::module_& m) {
  m.def("conv2d", [](const TensorPtr& input, const TensorPtr& weight, const py::object& bias, const py::object& stride,
                     const py::object& padding, const py::object& dilation, int64_t groups) {
    Conv2dOptions o;
    o.stride = int_list_arg("conv2d", stride);
    o.dilation = int_list_arg("conv2d", dilation);
    if (py::isinstance<py::str>(padding)) o.padding_mode = padding.cast<std::string>();
    else o.padding = int_list_arg("conv2d", padding);
    o.groups = groups;
    TensorPtr b;
    if (!bias.is_none()) {
      if (!py::isinstance<Tensor>(bias))
        throw TypeError("[conv2d] bias must be a Tensor or None, got " + std::string(py::str(py::type::of(bias).attr("__name__"))));
      b = bias.cast<TensorPtr>();
    }
    return conv2d(input, weight, b, o);
  }, py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
     py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1);
}

}  // namespace bm::bind
