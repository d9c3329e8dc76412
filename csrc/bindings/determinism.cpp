// bm.use_deterministic_algorithms and its queries (core/determinism.h), and the warning hook that
// turns the core's warn_only messages into Python UserWarnings.
#include "bindings/common.h"
#include "core/determinism.h"
#include "core/errors.h"

namespace bm::bind {

namespace {
// Called from any thread, with or without the GIL (the autograd engine runs without it).
void warn(const std::string& message) {
  py::gil_scoped_acquire gil;
  if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) < 0) throw py::error_already_set();  // filter "error"
}

// Every device type, available here or not: the docs table lists metal on Linux too.
constexpr std::pair<DeviceType, const char*> kTypes[] = {
    {DeviceType::CPU, "cpu"}, {DeviceType::MetalSim, "metal-sim"}, {DeviceType::Metal, "metal"},
    {DeviceType::Cuda, "cuda"}};

DeviceType device_type_arg(const std::string& type) {
  for (auto& [t, name] : kTypes)
    if (type == name) return t;
  throw ValueError("[_set_nondeterministic_for_testing] unknown device type '" + type +
                   "'; expected cpu, metal-sim, metal or cuda");
}

OpId op_arg(const std::string& name) {
  for (size_t i = 0; i < all_ops().size(); ++i)
    if (name == all_ops()[i].name) return OpId(i);
  throw ValueError("[_set_nondeterministic_for_testing] no op named '" + name + "'");
}
}  // namespace

void init_determinism(py::module_& m) {
  set_warning_hook(&warn);
  m.def("_set_deterministic_algorithms", &set_deterministic_algorithms, py::arg("mode"), py::arg("warn_only"));
  m.def("are_deterministic_algorithms_enabled", &deterministic_algorithms_enabled);
  m.def("is_deterministic_algorithms_warn_only_enabled", &deterministic_warn_only);  // as torch: whatever mode
  // Device types (as "cpu", "metal", "metal-sim") whose kernel for the op is not deterministic.
  m.def("_nondeterministic_on", [](const std::string& op) {
    py::list out;
    OpId id = op_arg(op);
    for (auto& [t, name] : kTypes)
      if (nondeterministic_on(id, t)) out.append(name);
    return out;
  }, py::arg("op"));
  m.def("_set_nondeterministic_for_testing", [](const std::string& op, const std::string& type, bool on) {
    set_nondeterministic_for_testing(op_arg(op), device_type_arg(type), on);
  }, py::arg("op"), py::arg("device_type"), py::arg("on"));
}

}  // namespace bm::bind
