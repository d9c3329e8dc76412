// In-place Tensor methods: add_ sub_ mul_ div_ (and += -= *= /=), zero_ fill_ copy_ clamp_, and the
// one-input elementwise ops' relu_ sigmoid_ exp_ ... (written in place when no graph is recorded).
// Their autograd semantics live in csrc/autograd/inplace.cpp.
#include "autograd/inplace.h"
#include "bindings/common.h"
#include "core/errors.h"

namespace bm::bind {

namespace {

// other * alpha, as torch's add(other, alpha=) / sub(other, alpha=).
Operand scaled(const char* op, const py::object& other, const py::object& alpha) {
  Operand o = operand_arg(op, other);
  if (alpha.is_none()) return o;
  Scalar a = scalar_arg(op, alpha);
  if (a.kind != Scalar::Float && a.i == 1) return o;
  if (o.is_scalar()) {
    Scalar s = o.s;
    if (s.kind == Scalar::Float || a.kind == Scalar::Float) return Scalar::from_double(s.f * a.f);
    return Scalar::from_int(s.i * a.i);
  }
  return Operand(binary(OpId::mul, o, a));
}

py::object inplace_op(OpId op, const TensorPtr& self, const py::object& other, const py::object& alpha) {
  std::string name = std::string(op_row(op).name) + "_";
  if (!py::isinstance<Tensor>(other) && !is_number(other))
    throw TypeError("[" + name + "] expected a tensor or a number, got " +
                    std::string(py::str(py::type::of(other).attr("__name__"))));
  return py::cast(inplace_binary(op, self, scaled(name.c_str(), other, alpha)));
}

}  // namespace

void init_inplace(py::module_& m, py::class_<Tensor, TensorPtr>& cls) {
  auto arith = [&](const char* name, const char* dunder, OpId op, bool has_alpha) {
    if (has_alpha)
      cls.def(name, [op](const TensorPtr& s, const py::object& o, const py::object& alpha) {
        return inplace_op(op, s, o, alpha);
      }, py::arg("other"), py::kw_only(), py::arg("alpha") = py::none());
    else
      cls.def(name, [op](const TensorPtr& s, const py::object& o) { return inplace_op(op, s, o, py::none()); },
              py::arg("other"));
    cls.def(dunder, [op](const TensorPtr& s, const py::object& o) -> py::object {
      if (!py::isinstance<Tensor>(o) && !is_number(o)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
      return inplace_op(op, s, o, py::none());
    });
  };
  arith("add_", "__iadd__", OpId::add, true);
  arith("sub_", "__isub__", OpId::sub, true);
  arith("mul_", "__imul__", OpId::mul, false);
  arith("div_", "__itruediv__", OpId::div, false);
  cls.def("zero_", [](const TensorPtr& s) {
    check_writable("zero_", *s);  // named as the user called it (fill_ checks again)
    return inplace_fill(s, Scalar::from_int(0));
  });
  cls.def("fill_", [](const TensorPtr& s, const py::object& v) {
    if (py::isinstance<Tensor>(v)) {
      TensorPtr t = v.cast<TensorPtr>();
      if (t->ndim() != 0)
        throw ValueError("[fill_] only supports a 0-dimension value tensor, got one of shape " + shape_str(t->shape));
      return inplace_copy(s, t);
    }
    return inplace_fill(s, scalar_arg("fill_", v));
  }, py::arg("value"));
  cls.def("copy_", [](const TensorPtr& s, const TensorPtr& src) { return inplace_copy(s, src); }, py::arg("src"));
  auto clamp_ = [](const TensorPtr& s, const py::object& min, const py::object& max) {
    std::optional<Scalar> lo, hi;
    if (!min.is_none()) lo = scalar_arg("clamp_", min);
    if (!max.is_none()) hi = scalar_arg("clamp_", max);
    return inplace_clamp(s, lo, hi);
  };
  // The one-input elementwise ops torch has an in-place method for, named after their registry row.
  for (OpId op : {OpId::neg, OpId::abs, OpId::relu, OpId::exp, OpId::log, OpId::sqrt, OpId::rsqrt, OpId::sin,
                  OpId::cos, OpId::tanh, OpId::sigmoid})
    cls.def((std::string(op_row(op).name) + "_").c_str(), [op](const TensorPtr& s) { return inplace_unary(op, s); });
  m.def("relu_", [](const TensorPtr& s) { return inplace_unary(OpId::relu, s); }, py::arg("input"));
  m.def("_silu_", [](const TensorPtr& s) { return inplace_unary(OpId::silu, s); }, py::arg("input"));
  cls.def("clamp_", clamp_, py::arg("min") = py::none(), py::arg("max") = py::none());
  cls.def("clip_", clamp_, py::arg("min") = py::none(), py::arg("max") = py::none());
  m.def("_inplace_copy", [](const TensorPtr& s, const TensorPtr& src) { return inplace_copy(s, src); });
}

}  // namespace bm::bind
