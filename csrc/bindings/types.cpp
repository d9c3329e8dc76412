// dtype and device objects, and argument conversion helpers.
#include <array>
#include <map>

#include "bindings/common.h"
#include "core/backend.h"
#include "core/errors.h"

namespace bm::bind {

namespace {
Device* g_default_device = nullptr;
}

Device* default_device() { return g_default_device ? g_default_device : cpu_device(); }
void set_default_device(Device* d) { g_default_device = d; }

py::object device_object(Device* d) {
  static auto* objs = new std::map<Device*, py::object>();  // leaked: lives as long as the module
  auto it = objs->find(d);
  if (it != objs->end()) return it->second;
  py::object o = py::cast(d, py::return_value_policy::reference);
  (*objs)[d] = o;
  return o;
}

py::object dtype_object(DType d) {
  static auto* objs = new std::array<py::object, kNumDTypes>();  // leaked: lives as long as the module
  py::object& o = (*objs)[int(d)];
  if (!o) o = py::cast(d, py::return_value_policy::copy);
  return o;
}

Device* device_arg(const py::handle& obj) {
  if (obj.is_none()) return default_device();
  if (py::isinstance<py::str>(obj)) return get_device(obj.cast<std::string>());
  if (py::isinstance<Device>(obj)) return obj.cast<Device*>();
  throw TypeError("[device] expected a device or a device string such as 'cpu' or 'metal', got " +
                  std::string(py::str(py::type::of(obj).attr("__name__"))));
}

std::optional<DType> dtype_arg(const py::handle& obj) {
  if (obj.is_none()) return std::nullopt;
  if (py::isinstance<DType>(obj)) return obj.cast<DType>();
  throw TypeError("expected a bessemer dtype such as bessemer.float32, got " + std::string(py::repr(obj)));
}

bool is_number(const py::handle& obj) {
  return PyBool_Check(obj.ptr()) || PyLong_Check(obj.ptr()) || PyFloat_Check(obj.ptr()) ||
         py::isinstance(obj, py::module_::import("numpy").attr("generic"));
}

Scalar scalar_arg(const char* op, const py::handle& obj) {
  PyObject* o = obj.ptr();
  if (PyBool_Check(o)) return Scalar::from_bool(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) throw ValueError(std::string("[") + op + "] integer " + std::string(py::str(obj)) + " does not fit in int64");
    return Scalar::from_int(v);
  }
  if (PyFloat_Check(o)) return Scalar::from_double(PyFloat_AS_DOUBLE(o));
  // numpy scalars
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance(obj, np.attr("bool_"))) return Scalar::from_bool(obj.cast<bool>());
  if (py::isinstance(obj, np.attr("integer"))) return Scalar::from_int(int64_arg(op, "integer", obj));
  if (py::isinstance(obj, np.attr("floating"))) return Scalar::from_double(obj.cast<double>());
  throw TypeError(std::string("[") + op + "] expected a number, got " + std::string(py::str(py::type::of(obj).attr("__name__"))));
}

Operand operand_arg(const char* op, const py::handle& obj) {
  if (py::isinstance<Tensor>(obj)) return Operand(obj.cast<TensorPtr>());
  if (PyBool_Check(obj.ptr()) || PyLong_Check(obj.ptr()) || PyFloat_Check(obj.ptr()) || is_number(obj))
    return Operand(scalar_arg(op, obj));
  throw TypeError(std::string("[") + op + "] expected a Tensor or a number, got " +
                  std::string(py::str(py::type::of(obj).attr("__name__"))));
}

TensorPtr optional_tensor_arg(const char* op, const char* name, const py::handle& obj) {
  if (obj.is_none()) return nullptr;
  if (!py::isinstance<Tensor>(obj))
    throw TypeError(std::string("[") + op + "] " + name + " must be a Tensor or None, got " +
                    std::string(py::str(py::type::of(obj).attr("__name__"))));
  return obj.cast<TensorPtr>();
}

int64_t int64_arg(const char* op, const char* what, const py::handle& obj) {
  py::object num = py::reinterpret_borrow<py::object>(obj);
  if (!PyLong_Check(obj.ptr())) {
    if (!py::hasattr(obj, "__index__"))
      throw TypeError(std::string("[") + op + "] expected an int " + what + ", got " +
                      std::string(py::str(py::type::of(obj).attr("__name__"))));
    num = obj.attr("__index__")();
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(num.ptr(), &overflow);
  if (overflow)
    throw ValueError(std::string("[") + op + "] " + what + " " + std::string(py::str(num)) +
                     " does not fit in 64 bits (signed)");
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return int64_t(v);
}

std::vector<int64_t> int_list_arg(const char* op, const py::handle& obj) {
  if (PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr())) return {int64_arg(op, "size", obj)};
  if (py::isinstance<py::sequence>(obj) && !py::isinstance<py::str>(obj)) {
    std::vector<int64_t> r;
    for (auto item : obj) {
      if ((!PyLong_Check(item.ptr()) || PyBool_Check(item.ptr())) && !py::hasattr(item, "__index__"))
        throw TypeError(std::string("[") + op + "] expected ints, got " + std::string(py::repr(obj)));
      r.push_back(int64_arg(op, "size", item));
    }
    return r;
  }
  if (py::hasattr(obj, "__index__")) return {int64_arg(op, "size", obj)};
  throw TypeError(std::string("[") + op + "] expected an int or a sequence of ints, got " + std::string(py::repr(obj)));
}

std::vector<int64_t> sizes_from_args(const char* op, const py::args& args) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return int_list_arg(op, args[0]);
  std::vector<int64_t> r;
  for (auto a : args) {
    auto v = int_list_arg(op, a);
    if (v.size() != 1) throw TypeError(std::string("[") + op + "] expected sizes as ints, got " + std::string(py::repr(args)));
    r.push_back(v[0]);
  }
  return r;
}

void init_types(py::module_& m) {
  // A plain class (not an enum) so each dtype is one interned object: `t.dtype is bm.float32`.
  py::class_<DType> dt(m, "dtype");
  dt.def("__repr__", [](DType d) { return std::string("bessemer.") + dtype_name(d); })
      .def("__str__", [](DType d) { return std::string("bessemer.") + dtype_name(d); })
      .def("__eq__", [](DType a, const py::object& b) { return py::isinstance<DType>(b) && a == b.cast<DType>(); })
      .def("__hash__", [](DType d) { return int(d); })
      .def("__reduce__", [](DType d) { return py::make_tuple(py::module_::import("bessemer").attr("dtype_from_name"), py::make_tuple(dtype_name(d))); })
      .def_property_readonly("itemsize", [](DType d) { return itemsize(d); })
      .def_property_readonly("is_floating_point", [](DType d) { return is_floating(d); })
      .def_property_readonly("name", [](DType d) { return std::string(dtype_name(d)); });
  for (int i = 0; i < kNumDTypes; ++i) dt.attr(dtype_name(DType(i))) = dtype_object(DType(i));
  m.def("dtype_from_name", [](const std::string& n) { return dtype_object(dtype_from_name(n)); }, py::arg("name"));
  // bm.get_default_dtype / set_default_dtype (torch's): the dtype Python floats and int -> float
  // promotion give; only floating dtypes are accepted.
  m.def("get_default_dtype", [] { return dtype_object(default_float_dtype()); });
  m.def("set_default_dtype", [](const py::object& d) {
    if (!py::isinstance<DType>(d))
      throw TypeError("[set_default_dtype] expected a bessemer dtype such as bessemer.float32, got " + std::string(py::repr(d)));
    set_default_float_dtype(d.cast<DType>());
  }, py::arg("d"));

  py::class_<Device, std::unique_ptr<Device, py::nodelete>>(m, "Device")
      .def_property_readonly("type", [](const Device& d) { return d.type_name; })
      .def_property_readonly("index", [](const Device& d) -> py::object {
        if (d.index < 0) return py::none();
        return py::int_(d.index);
      })
      .def("__str__", [](const Device& d) { return d.name; })
      .def("__repr__", [](const Device& d) {
        if (d.index < 0) return "device(type='" + d.type_name + "')";
        return "device(type='" + d.type_name + "', index=" + std::to_string(d.index) + ")";
      })
      .def_property_readonly("description", [](const Device& d) { return d.backend->description(); })
      .def("__eq__", [](const Device& a, const py::object& b) {
        if (py::isinstance<py::str>(b)) {
          try { return &a == get_device(b.cast<std::string>()); } catch (const Error&) { return false; }
        }
        return py::isinstance<Device>(b) && &a == b.cast<Device*>();
      })
      .def("__hash__", [](const Device& d) { return std::hash<std::string>()(d.name); });

  m.def("device", [](const py::object& spec) { return device_object(device_arg(spec)); }, py::arg("spec"));
  m.def("available_devices", [] {
    py::list l;
    for (Device* d : available_devices()) l.append(device_object(d));
    return l;
  });
  m.def("get_default_device", [] { return device_object(default_device()); });
  m.def("set_default_device", [](const py::object& d) { set_default_device(device_arg(d)); }, py::arg("device"));
  m.def("synchronize", [](const py::object& d) { synchronize(d.is_none() ? nullptr : device_arg(d)); },
        py::arg("device") = py::none());
}

}  // namespace bm::bind
