// bm.memory_stats / reset_peak_memory_stats / empty_cache / set_memory_limit: the device's
// MemoryAccount (core/memory.h) as torch-style dict keys. docs/memory.md says what each counts.
#include <limits>

#include "bindings/common.h"
#include "core/backend.h"
#include "core/errors.h"

namespace bm::bind {

namespace {

py::dict stats_dict(const MemoryStats& s) {
  py::dict d;
  d["allocated_bytes.current"] = s.allocated;
  d["allocated_bytes.peak"] = s.allocated_peak;
  d["requested_bytes.current"] = s.requested;
  d["requested_bytes.peak"] = s.requested_peak;
  d["cached_bytes.current"] = s.cached;
  d["reserved_bytes.current"] = s.allocated + s.cached;
  d["reserved_bytes.peak"] = s.reserved_peak;
  d["num_allocs"] = s.num_allocs;
  d["num_frees"] = s.num_frees;
  d["num_cache_hits"] = s.num_cache_hits;
  d["num_alloc_retries"] = s.num_alloc_retries;
  d["num_ooms"] = s.num_ooms;
  d["limit_bytes"] = s.limit;
  return d;
}

// None or 0: no limit. Refuses what is not a non-negative int (bool and float included: a
// fractional byte count is a mistake, not something to round).
uint64_t limit_arg(const py::handle& obj) {
  if (obj.is_none()) return 0;
  if (py::isinstance<py::bool_>(obj) || !py::isinstance<py::int_>(obj))
    throw TypeError("[set_memory_limit] nbytes must be an int number of bytes or None, got " +
                    std::string(py::str(py::type::of(obj).attr("__name__"))));
  py::int_ v = py::reinterpret_borrow<py::int_>(obj);
  if (v < py::int_(0))
    throw ValueError("[set_memory_limit] nbytes must be non-negative (0 or None: no limit), got " +
                     std::string(py::str(obj)));
  if (v > py::int_(std::numeric_limits<int64_t>::max()))
    throw ValueError("[set_memory_limit] nbytes is too large: " + std::string(py::str(obj)));
  return v.cast<uint64_t>();
}

}  // namespace

void init_memory(py::module_& m) {
  m.def("memory_stats", [](const py::object& d) { return stats_dict(device_arg(d)->backend->memory().stats()); },
        py::arg("device") = py::none(),
        "The device's memory accounting as a dict (see docs/memory.md); device None: the default device.");
  m.def("reset_peak_memory_stats", [](const py::object& d) { device_arg(d)->backend->memory().reset_peaks(); },
        py::arg("device") = py::none(), "Sets every '.peak' of memory_stats to its current value.");
  m.def("empty_cache", [](const py::object& d) {
    Device* dev = device_arg(d);
    py::gil_scoped_release nogil;  // it waits for the device's queue
    dev->backend->empty_cache();
  }, py::arg("device") = py::none(), "Returns the device allocator's idle cached blocks to the system.");
  m.def("set_memory_limit", [](const py::object& d, const py::object& nbytes) {
    Device* dev = device_arg(d);
    uint64_t old = dev->backend->memory().set_limit(limit_arg(nbytes));
    return old ? py::object(py::int_(old)) : py::object(py::none());
  }, py::arg("device"), py::arg("nbytes"),
        "Caps the bytes the device's tensors may hold; None or 0 removes the cap. Returns the previous limit "
        "(None: there was none).");
}

}  // namespace bm::bind
