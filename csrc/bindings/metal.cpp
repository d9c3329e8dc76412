// Queue statistics of a Metal device (tests use them to show launches are batched), and the
// simulator's race detector and shuffle settings with a runner for its control kernels.
#include <cstring>

#include "bindings/common.h"
#include "core/errors.h"
#include "metal/backend.h"
#include "metal/runtime.h"
#include "msl_sim/race.h"

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
  m.def("_set_kernel_log", [](const py::object& d, bool on) { metal_backend(d).set_kernel_log(on); },
        py::arg("device"), py::arg("on"));
  m.def("_take_kernel_log", [](const py::object& d) { return metal_backend(d).take_kernel_log(); }, py::arg("device"),
        "The kernel names launched on a Metal device since the last call, while _set_kernel_log is on.");

  m.def("sim_race_check", &msl::race_check_enabled,
        "Whether the simulator checks kernels for data races (BESSEMER_SIM_RACECHECK, default on).");
  m.def("sim_set_race_check", &msl::set_race_check, py::arg("on"));
  m.def("sim_shuffle", []() -> py::object {
    uint64_t seed = 0;
    if (!msl::shuffle_enabled(&seed)) return py::none();
    return py::int_(seed);
  }, "The seed of the simulator's shuffled lane order (BESSEMER_SIM_SHUFFLE), or None when off.");
  m.def("sim_set_shuffle", [](const py::object& seed) {
    if (seed.is_none()) msl::set_shuffle(false, 0);
    else msl::set_shuffle(true, seed.cast<uint64_t>());
  }, py::arg("seed"));
  // Runs one of the race detector's control kernels (csrc/msl_sim/controls) on a 1-D grid of
  // `threads` with `nbuffers` zeroed buffers of `threads` uints; returns their contents.
  m.def("_sim_run_control", [](const std::string& name, uint32_t threads, uint32_t threadgroup, int nbuffers) {
    if (nbuffers < 1 || nbuffers > 4) throw ValueError("[_sim_run_control] nbuffers must be 1 to 4");
    std::vector<std::vector<uint32_t>> out(static_cast<size_t>(nbuffers), std::vector<uint32_t>(threads));
    {
      py::gil_scoped_release nogil;
      auto rt = metal::make_sim_runtime();
      std::vector<std::shared_ptr<metal::Buffer>> bufs;
      auto cb = rt->new_command_buffer();
      metal::ComputeEncoder& e = cb->compute_encoder();
      e.set_pipeline(rt->pipeline("msl_sim_control_" + name));
      for (int i = 0; i < nbuffers; ++i) {
        bufs.push_back(rt->new_buffer(size_t(threads) * 4));
        e.set_buffer(bufs.back(), 0, uint32_t(i));
      }
      e.dispatch_threads(metal::Size3{threads, 1, 1}, metal::Size3{threadgroup, 1, 1});
      cb->commit();
      cb->wait_until_completed();
      for (int i = 0; i < nbuffers; ++i) std::memcpy(out[size_t(i)].data(), bufs[size_t(i)]->contents(), size_t(threads) * 4);
    }
    return out;
  }, py::arg("name"), py::arg("threads"), py::arg("threadgroup"), py::arg("nbuffers") = 1);
}

}  // namespace bm::bind
