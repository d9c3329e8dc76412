// Module-level functions. Unary and binary ops are bound from the op table, so a new table row
// shows up in Python without touching this file.
#include "bindings/common.h"
#include "autograd/rules.h"
#include "core/backend.h"
#include "core/errors.h"

namespace bm::bind {

void init_ops(py::module_& m) {
  // ---- factories ----
  m.def("full", [](const py::object& size, const py::object& value, const py::object& dtype, const py::object& device) {
    Scalar v = scalar_arg("full", value);
    std::optional<DType> dt = dtype_arg(dtype);
    DType d = dt ? *dt : v.kind == Scalar::Float ? default_float_dtype() : v.kind == Scalar::Int ? DType::Int64 : DType::Bool;
    return full(int_list_arg("full", size), v, d, device_arg(device));
  }, py::arg("size"), py::arg("fill_value"), py::arg("dtype") = py::none(), py::arg("device") = py::none());
  m.def("empty", [](const py::object& size, const py::object& dtype, const py::object& device) {
    std::optional<DType> dt = dtype_arg(dtype);
    return empty_tensor(int_list_arg("empty", size), dt ? *dt : default_float_dtype(), device_arg(device));
  }, py::arg("size"), py::arg("dtype") = py::none(), py::arg("device") = py::none());
  m.def("arange", [](const py::object& start, const py::object& end, const py::object& step, const py::object& dtype,
                     const py::object& device) {
    return arange(scalar_arg("arange", start), scalar_arg("arange", end), scalar_arg("arange", step), dtype_arg(dtype),
                  device_arg(device));
  }, py::arg("start"), py::arg("end"), py::arg("step"), py::arg("dtype") = py::none(), py::arg("device") = py::none());

  // ---- copies and conversions ----
  m.def("cast", &cast, py::arg("input"), py::arg("dtype"));
  m.def("to_device", [](const TensorPtr& t, const py::object& d) { return to_device(t, device_arg(d)); });
  m.def("copy_", [](const TensorPtr& dst, const TensorPtr& src) {
    check_inplace_target("copy_", *dst);
    copy_into(dst, expand(src, dst->shape));
    return dst;
  });
  m.def("cat", [](const std::vector<TensorPtr>& ts, const py::object& dim) { return cat(ts, int64_arg("cat", "dim", dim)); },
        py::arg("tensors"), py::arg("dim") = 0);
  m.def("stack", [](const std::vector<TensorPtr>& ts, const py::object& dim) { return stack(ts, int64_arg("stack", "dim", dim)); },
        py::arg("tensors"), py::arg("dim") = 0);

  // ---- compute, generated from the op table ----
  for (size_t i = 0; i < all_ops().size(); ++i) {
    const OpRow& row = all_ops()[i];
    OpId op = OpId(i);
    if (row.shape_rule == ShapeRule::Elementwise && row.nin == 1 && row.dtype_rule != DTypeRule::Cast &&
        op != OpId::clamp) {
      m.def(row.name, [op](const TensorPtr& t) { return unary(op, t); }, py::arg("input"));
    } else if (row.shape_rule == ShapeRule::Elementwise && row.nin == 2) {
      m.def(row.name, [op](const py::object& a, const py::object& b) {
        const char* n = op_row(op).name;
        return binary(op, operand_arg(n, a), operand_arg(n, b));
      }, py::arg("input"), py::arg("other"));
    }
  }
  m.def("clamp", [](const TensorPtr& t, const py::object& min, const py::object& max) {
    std::optional<Scalar> lo, hi;
    if (!min.is_none()) lo = scalar_arg("clamp", min);
    if (!max.is_none()) hi = scalar_arg("clamp", max);
    return clamp(t, lo, hi);
  }, py::arg("input"), py::arg("min") = py::none(), py::arg("max") = py::none());
  m.def("where", [](const py::object& c, const py::object& a, const py::object& b) {
    return where(operand_arg("where", c), operand_arg("where", a), operand_arg("where", b));
  }, py::arg("condition"), py::arg("input"), py::arg("other"));
  m.def("arg_reduce", [](const TensorPtr& t, const std::string& op, const py::object& dim, bool keepdim) {
    std::optional<int64_t> d;
    if (!dim.is_none()) d = int64_arg(op.c_str(), "dim", dim);
    return arg_reduce(op == "argmax" ? OpId::argmax : OpId::argmin, t, d, keepdim);
  }, py::arg("input"), py::arg("op"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  m.def("softmax", [](const TensorPtr& t, const py::object& dim) { return softmax(OpId::softmax, t, int64_arg("softmax", "dim", dim)); }, py::arg("input"), py::arg("dim"));
  m.def("log_softmax", [](const TensorPtr& t, const py::object& dim) {
    return softmax(OpId::log_softmax, t, int64_arg("log_softmax", "dim", dim));
  }, py::arg("input"), py::arg("dim"));
  m.def("matmul", &matmul, py::arg("input"), py::arg("other"));

  // ---- the registry, for the coverage matrix and the docs table ----
  m.def("op_table", [] {
    py::list rows;
    for (size_t i = 0; i < all_ops().size(); ++i) {
      const OpRow& r = all_ops()[i];
      py::dict d;
      d["name"] = r.name;
      d["inputs"] = r.nin;
      static const char* const kShapeRules[] = {"elementwise", "reduce", "same_shape", "matmul", "given"};
      d["shape_rule"] = kShapeRules[int(r.shape_rule)];
      d["grad"] = r.grad ? py::object(py::str(r.grad->node_name)) : py::object(py::none());
      py::list dts;
      for (int k = 0; k < kNumDTypes; ++k)
        if (r.dtypes & (1u << k)) dts.append(DType(k));
      d["dtypes"] = dts;
      py::dict kernels;
      for (Device* dev : available_devices()) {
        py::list have;
        for (int k = 0; k < kNumDTypes; ++k)
          if (dev->backend->kernel(OpId(i), DType(k))) have.append(DType(k));
        kernels[py::str(dev->name)] = have;
      }
      d["kernels"] = kernels;
      rows.append(d);
    }
    return rows;
  });
}

}  // namespace bm::bind
