// Queue statistics of a Metal device (tests use them to show launches are batched).
#include "bindings/common.h"
#include "core/errors.h"
#include "metal/backend.h"

namespace bm::bind {

namespace {
metal::MetalBackend& metal_backend(const py::object& d) {
  Device* dev = device_arg(d);
  if (dev->type == DeviceType::CPU) throw ValueError("[queue_stats] " + dev->name + " is not a Metal device");
  return *static_cast<metal::MetalBackend*>(dev->backend);
}
}  // namespace

void init_metal(py::module_& m) {
  m.def("queue_stats", [](const py::object& d) {
    metal::QueueStats s = metal_backend(d).stats();
    py::dict r;
    r["dispatches"] = s.dispatches;
    r["commits"] = s.commits;
    r["waits"] = s.waits;
    return r;
  }, py::arg("device"));
  m.def("reset_queue_stats", [](const py::object& d) { metal_backend(d).reset_stats(); }, py::arg("device"));
}

}  // namespace bm::bind
