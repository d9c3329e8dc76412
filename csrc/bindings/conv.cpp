// conv2d: torch.nn.functional.conv2d's signature. Argument values are checked in C++ (after the
// device and dtype checks); here they are only converted.
#include "bindings/common.h"
#include "core/ops_conv.h"

namespace bm::bind {

namespace {

Conv2dOptions conv_options(const char* op, const py::object& stride, const py::object& padding,
                           const py::object& dilation, int64_t groups) {
  Conv2dOptions o;
  o.stride = int_list_arg(op, stride);
  o.dilation = int_list_arg(op, dilation);
  if (py::isinstance<py::str>(padding)) o.padding_mode = padding.cast<std::string>();
  else o.padding = int_list_arg(op, padding);
  o.groups = groups;
  return o;
}

}  // namespace

void init_conv(py::module_& m) {
  m.def("conv2d", [](const TensorPtr& input, const TensorPtr& weight, const py::object& bias, const py::object& stride,
                     const py::object& padding, const py::object& dilation, int64_t groups) {
    Conv2dOptions o = conv_options("conv2d", stride, padding, dilation, groups);
    return conv2d(input, weight, optional_tensor_arg("conv2d", "bias", bias), o);
  }, py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
     py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1);

  // The gradients autograd uses (ops_conv.h), for tests: the forward's arguments, and the shape of
  // the input / the weight whose gradient is wanted.
  m.def("_conv2d_backward_input", [](const TensorPtr& grad_output, const TensorPtr& weight,
                                     const py::object& input_shape, const py::object& stride,
                                     const py::object& padding, const py::object& dilation, int64_t groups) {
    const char* op = "conv2d_backward_input";
    return conv2d_backward_input(grad_output, weight, int_list_arg(op, input_shape),
                                 conv_options(op, stride, padding, dilation, groups));
  }, py::arg("grad_output"), py::arg("weight"), py::arg("input_shape"), py::arg("stride") = 1,
     py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1);
  m.def("_conv2d_backward_weight", [](const TensorPtr& grad_output, const TensorPtr& input,
                                      const py::object& weight_shape, const py::object& stride,
                                      const py::object& padding, const py::object& dilation, int64_t groups) {
    const char* op = "conv2d_backward_weight";
    return conv2d_backward_weight(grad_output, input, int_list_arg(op, weight_shape),
                                  conv_options(op, stride, padding, dilation, groups));
  }, py::arg("grad_output"), py::arg("input"), py::arg("weight_shape"), py::arg("stride") = 1,
     py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("groups") = 1);
}

}  // namespace bm::bind
