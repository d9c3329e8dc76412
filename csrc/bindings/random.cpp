// Generators and in-place random fills.
#include "bindings/common.h"
#include "core/errors.h"
#include "core/random.h"

namespace bm::bind {

namespace {

// torch's seed rule: [-2**63, 2**64 - 1]; negative seeds map to 0xffff_ffff_ffff_ffff + seed.
uint64_t seed_arg(const py::int_& s) {
  py::int_ lo(py::module_::import("builtins").attr("int")(-(int64_t(1) << 62)) * py::int_(2));
  if (s < lo || s > py::int_(py::module_::import("builtins").attr("int")("18446744073709551615")))
    throw ValueError("[manual_seed] seed must be in [-2**63, 2**64 - 1], got " + std::string(py::str(s)));
  if (s < py::int_(0)) return uint64_t(0xffffffffffffffffull) + uint64_t(s.cast<int64_t>());
  return s.cast<uint64_t>();
}

Generator* gen_arg(const py::object& g) { return g.is_none() ? nullptr : g.cast<Generator*>(); }

}  // namespace

void init_random(py::module_& m) {
  // Held by shared_ptr: a generator made by bm.Generator is freed with its Python object (it used to
  // be held by a nodelete pointer and leaked, found by LeakSanitizer); a device's default generator
  // lives for the whole process and is handed out with a deleter that does nothing.
  py::class_<Generator, std::shared_ptr<Generator>>(m, "_Generator")
      .def_property_readonly("device", [](const Generator& g) { return device_object(g.device); })
      .def("manual_seed", [](Generator& g, const py::int_& s) { g.manual_seed(seed_arg(s)); })
      .def("initial_seed", &Generator::seed)
      .def("get_offset", &Generator::offset)
      .def("set_offset", &Generator::set_offset);
  m.def("_new_generator", [](const py::object& d) { return std::make_shared<Generator>(device_arg(d)); });
  m.def("default_generator", [](const py::object& d) {
    return std::shared_ptr<Generator>(&default_generator(device_arg(d)), [](Generator*) {});
  });
  m.def("manual_seed", [](const py::int_& s) { manual_seed_all(seed_arg(s)); }, py::arg("seed"));
  m.def("uniform_", [](const TensorPtr& t, double lo, double hi, const py::object& g) { uniform_(t, lo, hi, gen_arg(g)); return t; },
        py::arg("tensor"), py::arg("low") = 0.0, py::arg("high") = 1.0, py::arg("generator") = py::none());
  m.def("randint_", [](const TensorPtr& t, int64_t low, int64_t high, const py::object& g) { randint_(t, low, high, gen_arg(g)); return t; },
        py::arg("tensor"), py::arg("low"), py::arg("high"), py::arg("generator") = py::none());
  m.def("randperm", [](int64_t n, const py::object& dtype, const py::object& device, const py::object& g) {
    auto dt = dtype_arg(dtype);
    Generator* gen = gen_arg(g);
    Device* d = device.is_none() && gen ? gen->device : device_arg(device);
    return randperm(n, dt ? *dt : DType::Int64, d, gen);
  }, py::arg("n"), py::arg("dtype") = py::none(), py::arg("device") = py::none(), py::arg("generator") = py::none());
  m.def("normal_", [](const TensorPtr& t, double mean, double std, const py::object& g) { normal_(t, mean, std, gen_arg(g)); return t; },
        py::arg("tensor"), py::arg("mean") = 0.0, py::arg("std") = 1.0, py::arg("generator") = py::none());
}

}  // namespace bm::bind
