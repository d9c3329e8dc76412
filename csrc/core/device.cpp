#include "core/device.h"

#include <map>
#include <mutex>

#include "core/backend.h"
#include "core/errors.h"
#ifdef BESSEMER_HAVE_CUDA
#include "cuda/driver.h"
#endif

namespace bm {

std::unique_ptr<Backend> make_cpu_backend();  // csrc/cpu/backend.cpp
void register_metal_devices();                 // csrc/metal/backend.cpp

namespace {

struct Registry {
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<std::unique_ptr<Backend>> backends;
  Device* cpu = nullptr;
};

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry();  // never destroyed: tensors may outlive static destruction order
    return reg;
  }();
  return *r;
}

// Recursive: initialisation registers the metal devices through register_device.
std::recursive_mutex& registry_mutex() {
  static std::recursive_mutex m;
  return m;
}

void ensure_cpu() {
  Registry& r = registry();
  if (r.cpu) return;
  auto dev = std::make_unique<Device>(Device{DeviceType::CPU, -1, "cpu", "cpu", nullptr});
  auto be = make_cpu_backend();
  dev->backend = be.get();
  be->device = dev.get();
  r.cpu = dev.get();
  r.devices.push_back(std::move(dev));
  r.backends.push_back(std::move(be));
  register_metal_devices();
}

// Why no "cuda" device is listed (only asked when none is).
std::string cuda_unavailable_reason() {
#ifdef BESSEMER_HAVE_CUDA
  if (!cuda::driver()) return cuda::driver_status();
  return "no NVIDIA GPU with concurrent managed memory access (bessemer's CUDA buffers need it: Linux, Pascal or newer)";
#else
  return "this build has no CUDA target (built without a CUDA toolkit, or with BESSEMER_CUDA=OFF)";
#endif
}

std::string available_list() {
  std::string s;
  for (auto& d : registry().devices) s += (s.empty() ? "" : ", ") + d->name;
  return s;
}

}  // namespace

void register_device(DeviceType type, int index, const std::string& type_name, std::unique_ptr<Backend> backend) {
  std::lock_guard<std::recursive_mutex> lock(registry_mutex());
  ensure_cpu();
  Registry& r = registry();
  std::string name = type_name + ":" + std::to_string(index);
  auto dev = std::make_unique<Device>(Device{type, index, name, type_name, backend.get()});
  backend->device = dev.get();
  backend->memory().set_device_name(name);  // named in OutOfMemoryError messages
  r.devices.push_back(std::move(dev));
  r.backends.push_back(std::move(backend));
}

Device* cpu_device() {
  std::lock_guard<std::recursive_mutex> lock(registry_mutex());
  ensure_cpu();
  return registry().cpu;
}

std::vector<Device*> available_devices() {
  std::lock_guard<std::recursive_mutex> lock(registry_mutex());
  ensure_cpu();
  std::vector<Device*> out;
  for (auto& d : registry().devices) out.push_back(d.get());
  return out;
}

Device* get_device(const std::string& spec) {
  std::lock_guard<std::recursive_mutex> lock(registry_mutex());
  ensure_cpu();
  std::string type = spec;
  int index = 0;
  bool has_index = false;
  auto colon = spec.rfind(':');
  if (colon != std::string::npos) {
    type = spec.substr(0, colon);
    std::string idx = spec.substr(colon + 1);
    if (idx.empty() || idx.find_first_not_of("0123456789") != std::string::npos)
      throw ValueError("[device] invalid device string '" + spec + "': expected 'type' or 'type:index'");
    index = std::stoi(idx);
    has_index = true;
  }
  if (type == "cpu") {
    if (has_index && index != 0) throw ValueError("[device] there is only one cpu device; got '" + spec + "'");
    return registry().cpu;
  }
  if (type != "metal" && type != "metal-sim" && type != "cuda")
    throw ValueError("[device] unknown device type '" + type + "' in '" + spec +
                     "'; expected cpu, metal, metal-sim or cuda. Available devices: " + available_list());
  for (auto& d : registry().devices)
    if (d->type_name == type && d->index == index) return d.get();
  if (type == "metal") {
#ifdef BESSEMER_HAVE_METAL
    bool have_gpu = false;
    for (auto& d : registry().devices) have_gpu = have_gpu || d->type_name == "metal";
    std::string why = have_gpu ? "bessemer drives only the system's default GPU, metal:0"
                               : "Metal found no GPU on this machine";
#else
    std::string why = "this build has no Metal runtime (Metal needs macOS on Apple hardware)";
#endif
    throw Error("[device] '" + spec + "' is not available: " + why + ". Available devices: " + available_list());
  }
  if (type == "cuda") {
    int gpus = 0;
    for (auto& d : registry().devices) gpus += d->type_name == "cuda";
    std::string why = gpus == 1  ? std::string("this machine has one NVIDIA GPU, cuda:0")
                      : gpus > 1 ? "this machine has " + std::to_string(gpus) + " NVIDIA GPUs, cuda:0 to cuda:" +
                                       std::to_string(gpus - 1)
                                 : cuda_unavailable_reason();
    throw Error("[device] '" + spec + "' is not available: " + why + ". Available devices: " + available_list());
  }
  throw Error("[device] '" + spec + "' is not available. Available devices: " + available_list());
}

}  // namespace bm
