// Pooling functions with torch's argument names; bessemer.nn.functional wraps them.
#include "bindings/common.h"
#include "core/errors.h"
#include "core/ops_nn_pool.h"

namespace bm::bind {

namespace {

// None (or an empty sequence) -> empty: the op uses the kernel size, as torch does.
Dims stride_arg(const char* op, const py::object& stride) { return stride.is_none() ? Dims{} : int_list_arg(op, stride); }

bool bool_arg(const char* op, const char* name, const py::object& v) {
  if (!PyBool_Check(v.ptr()) && !PyLong_Check(v.ptr()))
    throw TypeError(std::string("[") + op + "] " + name + " must be a bool, got " + std::string(py::repr(v)));
  return v.cast<bool>();
}

// An int, or two ints or Nones (None: keep that input size).
std::vector<std::optional<int64_t>> output_size_arg(const py::object& v) {
  auto one = [](const py::handle& h) -> std::optional<int64_t> {
    if (h.is_none()) return std::nullopt;
    std::vector<int64_t> x = int_list_arg("adaptive_avg_pool2d", h);
    if (x.size() != 1 || !(PyLong_Check(h.ptr()) || py::hasattr(h, "__index__")))
      throw TypeError("[adaptive_avg_pool2d] output_size entries must be ints or None, got " +
                      std::string(py::repr(h)));
    return x[0];
  };
  if (v.is_none()) throw TypeError("[adaptive_avg_pool2d] output_size must be an int or a tuple of two, got None");
  if (py::isinstance<py::sequence>(v) && !py::isinstance<py::str>(v)) {
    std::vector<std::optional<int64_t>> r;
    for (auto item : v) r.push_back(one(item));
    return r;
  }
  const std::optional<int64_t> n = one(v);
  return {n, n};  // an int sizes both dims; a sequence must name both (checked by the op)
}

std::optional<int64_t> divisor_arg(const char* op, const py::object& divisor_override) {
  if (divisor_override.is_none()) return std::nullopt;
  std::vector<int64_t> d = int_list_arg(op, divisor_override);
  if (d.size() != 1 || py::isinstance<py::sequence>(divisor_override))
    throw TypeError(std::string("[") + op + "] divisor_override must be an int or None, got " +
                    std::string(py::repr(divisor_override)));
  return d[0];
}

}  // namespace

void init_pool(py::module_& m) {
  m.def("max_pool2d", [](const TensorPtr& input, const py::object& kernel_size, const py::object& stride,
                         const py::object& padding, const py::object& dilation, const py::object& ceil_mode) {
    const char* op = "max_pool2d";
    return max_pool2d(input, int_list_arg(op, kernel_size), stride_arg(op, stride), int_list_arg(op, padding),
                      int_list_arg(op, dilation), bool_arg(op, "ceil_mode", ceil_mode));
  }, py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = 0,
     py::arg("dilation") = 1, py::arg("ceil_mode") = false);
  m.def("max_pool2d_with_indices", [](const TensorPtr& input, const py::object& kernel_size, const py::object& stride,
                                      const py::object& padding, const py::object& dilation,
                                      const py::object& ceil_mode) {
    const char* op = "max_pool2d_with_indices";
    return max_pool2d_with_indices(input, int_list_arg(op, kernel_size), stride_arg(op, stride),
                                   int_list_arg(op, padding), int_list_arg(op, dilation),
                                   bool_arg(op, "ceil_mode", ceil_mode));
  }, py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = 0,
     py::arg("dilation") = 1, py::arg("ceil_mode") = false);
  m.def("avg_pool2d", [](const TensorPtr& input, const py::object& kernel_size, const py::object& stride,
                         const py::object& padding, const py::object& ceil_mode, const py::object& count_include_pad,
                         const py::object& divisor_override) {
    const char* op = "avg_pool2d";
    std::optional<int64_t> div = divisor_arg(op, divisor_override);
    return avg_pool2d(input, int_list_arg(op, kernel_size), stride_arg(op, stride), int_list_arg(op, padding),
                      bool_arg(op, "ceil_mode", ceil_mode), bool_arg(op, "count_include_pad", count_include_pad), div);
  }, py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(), py::arg("padding") = 0,
     py::arg("ceil_mode") = false, py::arg("count_include_pad") = true, py::arg("divisor_override") = py::none());
  m.def("adaptive_avg_pool2d", [](const TensorPtr& input, const py::object& output_size) {
    return adaptive_avg_pool2d(input, output_size_arg(output_size));
  }, py::arg("input"), py::arg("output_size"));

  // The gradients autograd uses (ops_nn_pool.h), for tests: grad_output, the forward's input shape
  // and arguments.
  m.def("_max_pool2d_backward", [](const TensorPtr& grad_output, const TensorPtr& indices,
                                   const py::object& input_shape, const py::object& kernel_size,
                                   const py::object& stride, const py::object& padding, const py::object& dilation,
                                   const py::object& ceil_mode) {
    const char* op = "max_pool2d_backward";
    return max_pool2d_backward(grad_output, indices, int_list_arg(op, input_shape), int_list_arg(op, kernel_size),
                               stride_arg(op, stride), int_list_arg(op, padding), int_list_arg(op, dilation),
                               bool_arg(op, "ceil_mode", ceil_mode));
  }, py::arg("grad_output"), py::arg("indices"), py::arg("input_shape"), py::arg("kernel_size"),
     py::arg("stride") = py::none(), py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("ceil_mode") = false);
  m.def("_avg_pool2d_backward", [](const TensorPtr& grad_output, const py::object& input_shape,
                                   const py::object& kernel_size, const py::object& stride, const py::object& padding,
                                   const py::object& ceil_mode, const py::object& count_include_pad,
                                   const py::object& divisor_override) {
    const char* op = "avg_pool2d_backward";
    return avg_pool2d_backward(grad_output, int_list_arg(op, input_shape), int_list_arg(op, kernel_size),
                               stride_arg(op, stride), int_list_arg(op, padding), bool_arg(op, "ceil_mode", ceil_mode),
                               bool_arg(op, "count_include_pad", count_include_pad),
                               divisor_arg(op, divisor_override));
  }, py::arg("grad_output"), py::arg("input_shape"), py::arg("kernel_size"), py::arg("stride") = py::none(),
     py::arg("padding") = 0, py::arg("ceil_mode") = false, py::arg("count_include_pad") = true,
     py::arg("divisor_override") = py::none());
  m.def("_adaptive_avg_pool2d_backward", [](const TensorPtr& grad_output, const py::object& input_shape) {
    return adaptive_avg_pool2d_backward(grad_output, int_list_arg("adaptive_avg_pool2d_backward", input_shape));
  }, py::arg("grad_output"), py::arg("input_shape"));
}

}  // namespace bm::bind
