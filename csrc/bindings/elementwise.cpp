// Elementwise math beyond the op-table-generated functions (bindings/ops.cpp binds log1p, floor,
// isnan, atan2, bitwise_and... from their rows): round with decimals, nan_to_num's replacements,
// lerp, reciprocal, square, and the Tensor operators & | ^ ~ with their reflected and in-place
// forms (and %= //=, remainder_ floor_divide_ fmod_). Python signatures (keywords, defaults) live in python/bessemer/_elementwise.py.
#include <tuple>

#include "autograd/inplace.h"
#include "bindings/common.h"
#include "core/errors.h"
#include "core/ops_elementwise.h"

namespace bm::bind {

namespace {

// self op other (reflected: other op self); NotImplemented for operands Python should try elsewhere.
py::object binary_operator(OpId op, const TensorPtr& self, const py::object& other, bool reflected) {
  if (!py::isinstance<Tensor>(other) && !is_number(other)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  Operand o = operand_arg(op_row(op).name, other);
  return py::cast(reflected ? binary(op, o, Operand(self)) : binary(op, Operand(self), o));
}

// self = self op other, as add_ and the other in-place arithmetic (autograd/inplace.h checks that
// the result's dtype fits self's: `bool_tensor &= 1` is refused, as torch).
TensorPtr inplace_operator(OpId op, const TensorPtr& self, const py::object& other) {
  std::string name = std::string(op_row(op).name) + "_";
  if (!py::isinstance<Tensor>(other) && !is_number(other))
    throw TypeError("[" + name + "] expected a tensor or a number, got " +
                    std::string(py::str(py::type::of(other).attr("__name__"))));
  return inplace_binary(op, self, operand_arg(name.c_str(), other));
}

std::optional<double> optional_double(const py::object& o) {
  if (o.is_none()) return std::nullopt;
  return o.cast<double>();
}

}  // namespace

void init_elementwise(py::module_& m) {
  m.def("_round", &round_decimals, py::arg("input"), py::arg("decimals"));
  m.def("_nan_to_num", [](const TensorPtr& t, double nan, const py::object& posinf, const py::object& neginf) {
    return nan_to_num(t, nan, optional_double(posinf), optional_double(neginf));
  }, py::arg("input"), py::arg("nan") = 0.0, py::arg("posinf") = py::none(), py::arg("neginf") = py::none());
  m.def("lerp", [](const TensorPtr& input, const TensorPtr& end, const py::object& weight) {
    return lerp(input, end, operand_arg("lerp", weight));
  }, py::arg("input"), py::arg("end"), py::arg("weight"));
  m.def("reciprocal", &reciprocal, py::arg("input"));
  m.def("square", &square, py::arg("input"));

  auto cls = py::reinterpret_borrow<py::class_<Tensor, TensorPtr>>(m.attr("Tensor"));
  struct Op {
    const char *dunder, *rdunder, *idunder, *method_;
    OpId op;
  };
  for (const Op& o : {Op{"__and__", "__rand__", "__iand__", "bitwise_and_", OpId::bitwise_and},
                      Op{"__or__", "__ror__", "__ior__", "bitwise_or_", OpId::bitwise_or},
                      Op{"__xor__", "__rxor__", "__ixor__", "bitwise_xor_", OpId::bitwise_xor}}) {
    const OpId op = o.op;
    cls.def(o.dunder, [op](const TensorPtr& t, const py::object& x) { return binary_operator(op, t, x, false); });
    cls.def(o.rdunder, [op](const TensorPtr& t, const py::object& x) { return binary_operator(op, t, x, true); });
    cls.def(o.idunder, [op](const TensorPtr& t, const py::object& x) -> py::object {
      if (!py::isinstance<Tensor>(x) && !is_number(x)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
      return py::cast(inplace_operator(op, t, x));
    });
    cls.def(o.method_, [op](const TensorPtr& t, const py::object& x) { return inplace_operator(op, t, x); },
            py::arg("other"));
  }
  cls.def("__invert__", [](const TensorPtr& t) { return unary(OpId::bitwise_not, t); });
  // In-place forms of the other binary ops that have operators or torch in-place methods.
  for (auto [idunder, method_, op] : {std::tuple{"__imod__", "remainder_", OpId::remainder},
                                      std::tuple{"__ifloordiv__", "floor_divide_", OpId::floor_divide},
                                      std::tuple{"", "fmod_", OpId::fmod}}) {
    const OpId o = op;
    if (*idunder)
      cls.def(idunder, [o](const TensorPtr& t, const py::object& x) -> py::object {
        if (!py::isinstance<Tensor>(x) && !is_number(x)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        return py::cast(inplace_operator(o, t, x));
      });
    cls.def(method_, [o](const TensorPtr& t, const py::object& x) { return inplace_operator(o, t, x); },
            py::arg("other"));
  }
}

}  // namespace bm::bind
