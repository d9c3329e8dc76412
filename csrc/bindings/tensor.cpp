// The Tensor class: properties, view methods, operators and indexing. Operators are bound here in
// C++ so a tiny `a + b` costs one call into the core; conveniences live in python/bessemer.
#include "autograd/inplace.h"
#include "bindings/common.h"
#include "core/errors.h"

namespace bm::bind {

namespace {

// A NumPy array operand becomes the tensor bessemer.tensor(array) makes, on self's device, and a
// 0-d array the number it holds, so `t + array` is a tensor with torch's type promotion
// (python/bessemer/_interop.py; ndarray + t reaches here through Tensor.__array_ufunc__).
py::object array_operand(const py::object& arr, const TensorPtr& self) {
  static py::object* conv = new py::object(py::module_::import("bessemer._interop").attr("_array_operand"));
  return (*conv)(arr, self);
}

// The array as a tensor even when 0-d (matmul takes no numbers).
TensorPtr array_tensor(const py::object& arr, const TensorPtr& self) {
  static py::object* conv = new py::object(py::module_::import("bessemer._interop").attr("_array_tensor"));
  return (*conv)(arr, self).cast<TensorPtr>();
}

py::object binary_op(OpId op, const TensorPtr& self, const py::object& other_in, bool reflected) {
  py::object other = py::isinstance<py::array>(other_in) ? array_operand(other_in, self) : other_in;
  if (!py::isinstance<Tensor>(other) && !is_number(other)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  Operand o = operand_arg(op_row(op).name, other);
  return py::cast(reflected ? binary(op, o, Operand(self)) : binary(op, Operand(self), o));
}

std::vector<int64_t> dims_arg(const char* op, const py::object& dim) {
  if (dim.is_none()) return {};
  return int_list_arg(op, dim);
}

}  // namespace

void init_tensor(py::module_& m) {
  py::class_<Tensor, TensorPtr> cls(m, "Tensor", py::buffer_protocol());
  // Tensor(t) is an alias of t (same storage and view); nn.Parameter subclasses Tensor this way.
  cls.def(py::init([](const TensorPtr& t) { return make_view(t, t->shape, t->strides, t->offset); }), py::arg("data"));
  cls.def_property_readonly("shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape)); })
      .def_property_readonly("dtype", [](const Tensor& t) { return dtype_object(t.dtype); })
      .def_property_readonly("device", [](const Tensor& t) { return device_object(t.device()); })
      .def_property_readonly("ndim", &Tensor::ndim)
      .def("dim", &Tensor::ndim)
      .def("numel", &Tensor::numel)
      .def("element_size", [](const Tensor& t) { return itemsize(t.dtype); })
      .def("size", [](const Tensor& t, const py::object& dim) -> py::object {
        if (dim.is_none()) return py::tuple(py::cast(t.shape));
        return py::int_(t.shape[normalize_dim("size", int64_arg("size", "dim", dim), t.ndim())]);
      }, py::arg("dim") = py::none())
      .def("stride", [](const Tensor& t, const py::object& dim) -> py::object {
        if (dim.is_none()) return py::tuple(py::cast(t.strides));
        return py::int_(t.strides[normalize_dim("stride", int64_arg("stride", "dim", dim), t.ndim())]);
      }, py::arg("dim") = py::none())
      .def("storage_offset", [](const Tensor& t) { return t.offset; })
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("contiguous", [](const TensorPtr& t) { return contiguous(t); })
      .def("clone", [](const TensorPtr& t) { return clone(t); })
      .def("_data_ptr", [](const Tensor& t) {
        t.storage->exposed = true;  // an address anyone can write through (core/storage.h)
        return reinterpret_cast<uintptr_t>(t.bytes());
      })
      .def("_storage_id", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.storage.get()); })
      // views
      .def("view", [](const TensorPtr& t, py::args a) { return view(t, sizes_from_args("view", a)); })
      .def("reshape", [](const TensorPtr& t, py::args a) { return reshape(t, sizes_from_args("reshape", a)); })
      .def("transpose", [](const TensorPtr& t, const py::object& d0, const py::object& d1) {
        return transpose(t, int64_arg("transpose", "dim0", d0), int64_arg("transpose", "dim1", d1));
      }, py::arg("dim0"), py::arg("dim1"))
      .def("permute", [](const TensorPtr& t, py::args a) { return permute(t, sizes_from_args("permute", a)); })
      .def("unsqueeze", [](const TensorPtr& t, const py::object& d) { return unsqueeze(t, int64_arg("unsqueeze", "dim", d)); },
           py::arg("dim"))
      .def("squeeze", [](const TensorPtr& t, const py::object& dim) {
        if (dim.is_none()) return squeeze(t, std::nullopt);
        return squeeze(t, int_list_arg("squeeze", dim));
      }, py::arg("dim") = py::none())
      .def("expand", [](const TensorPtr& t, py::args a) { return expand(t, sizes_from_args("expand", a)); })
      .def("flatten", [](const TensorPtr& t, const py::object& s, const py::object& e) {
        return flatten(t, int64_arg("flatten", "start_dim", s), int64_arg("flatten", "end_dim", e));
      }, py::arg("start_dim") = 0, py::arg("end_dim") = -1)
      // indexing: translated by bindings/index.cpp, done by core/ops_index.cpp
      .def("__getitem__", [](const TensorPtr& t, const py::object& i) { return index(t, index_arg(i, t)); })
      .def("__setitem__", [](const TensorPtr& t, const py::object& i, const py::object& v) {
        index_put_autograd(t, index_arg(i, t), setitem_value(v, t));
      })
      // arithmetic
      .def("__add__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::add, t, o, false); })
      .def("__radd__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::add, t, o, true); })
      .def("__sub__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::sub, t, o, false); })
      .def("__rsub__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::sub, t, o, true); })
      .def("__mul__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::mul, t, o, false); })
      .def("__rmul__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::mul, t, o, true); })
      .def("__truediv__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::div, t, o, false); })
      .def("__rtruediv__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::div, t, o, true); })
      .def("__floordiv__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::floor_divide, t, o, false); })
      .def("__rfloordiv__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::floor_divide, t, o, true); })
      .def("__mod__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::remainder, t, o, false); })
      .def("__rmod__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::remainder, t, o, true); })
      .def("__pow__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::pow, t, o, false); })
      .def("__rpow__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::pow, t, o, true); })
      .def("__eq__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::eq, t, o, false); })
      .def("__ne__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::ne, t, o, false); })
      .def("__lt__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::lt, t, o, false); })
      .def("__le__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::le, t, o, false); })
      .def("__gt__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::gt, t, o, false); })
      .def("__ge__", [](const TensorPtr& t, const py::object& o) { return binary_op(OpId::ge, t, o, false); })
      .def("__matmul__", [](const TensorPtr& a, const py::object& b) -> py::object {
        if (py::isinstance<py::array>(b)) return py::cast(matmul(a, array_tensor(b, a)));
        if (!py::isinstance<Tensor>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        return py::cast(matmul(a, b.cast<TensorPtr>()));
      })
      .def("__rmatmul__", [](const TensorPtr& a, const py::object& b) -> py::object {
        if (py::isinstance<py::array>(b)) return py::cast(matmul(array_tensor(b, a), a));
        return py::reinterpret_borrow<py::object>(Py_NotImplemented);
      })
      .def("__neg__", [](const TensorPtr& t) { return unary(OpId::neg, t); })
      .def("__abs__", [](const TensorPtr& t) { return unary(OpId::abs, t); })
      .def("__hash__", [](const py::object& self) { return py::hash(py::make_tuple(py::int_(reinterpret_cast<uintptr_t>(self.ptr())))); })
      // reductions (thin; python/bessemer/_tensor.py adds torch-style signatures)
      .def("_reduce", [](const TensorPtr& t, const std::string& op, const py::object& dim, bool keepdim,
                         double correction) {
        for (size_t i = 0; i < all_ops().size(); ++i)
          if (op == all_ops()[i].name) return reduce(OpId(i), t, dims_arg(op.c_str(), dim), keepdim, correction);
        throw ValueError("[reduce] unknown reduction '" + op + "'");
      }, py::arg("op"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::arg("correction") = 1.0);
  init_tensor_numpy(m, cls);
}

}  // namespace bm::bind
