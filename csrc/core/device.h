// Devices are interned: one Device object (and one Backend, one queue) per (type, index).
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace bm {

class Backend;

enum class DeviceType { CPU, Metal, MetalSim, Cuda };

struct Device {
  DeviceType type;
  int index;         // -1 for cpu, as torch prints no index for it
  std::string name;  // "cpu", "metal:0", "metal-sim:0", "cuda:0"
  std::string type_name;  // "cpu", "metal", "metal-sim", "cuda"
  Backend* backend;
};

// Parses "cpu", "metal", "metal:0", "metal-sim", "metal-sim:0", "cuda", "cuda:1". Unknown or unavailable devices
// raise an error that lists the devices that are available.
Device* get_device(const std::string& spec);
Device* cpu_device();
std::vector<Device*> available_devices();
// Backends register their devices once at start-up (a backend owns its Backend object).
void register_device(DeviceType type, int index, const std::string& type_name, std::unique_ptr<Backend> backend);

}  // namespace bm
