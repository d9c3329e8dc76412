// Host side of the MSL simulator: look kernels up by host name and run one dispatch.
// runtime_sim.cpp is the only user; it records launches and runs them at commit.
#pragma once
#include <string>
#include <vector>

#include "msl_sim/abi.h"

namespace bm::msl {

struct BufferArg {
  char* data = nullptr;
  size_t length = 0;
  bool set = false;
  bool constant = false;  // bytes copied by set_bytes (the `constant` address space)
};

struct LaunchSpec {
  const KernelInfo* kernel = nullptr;
  BufferArg buffers[kMaxBufferSlots];
  size_t threadgroup_memory[kMaxThreadgroupSlots] = {};
  bool threadgroup_set[kMaxThreadgroupSlots] = {};
  Dim3 threadgroups;       // threadgroups per grid
  Dim3 threads_per_group;  // the threadgroup size given to the dispatch
  Dim3 grid;               // threads per grid: lanes at or past it are not launched (non-uniform edge)
};

// The kernel registered under `host_name`, or null. Throws bm::Error if two shaders define it.
const KernelInfo* find_kernel(const std::string& host_name);
std::vector<std::string> kernel_names();

// Throws bm::ValueError for a dispatch Metal would reject: an empty grid or threadgroup, a
// threadgroup over 1024 threads (or the kernel's own limit), over 32 KiB of threadgroup memory.
void validate_launch(const LaunchSpec& spec);
// Runs every threadgroup of the dispatch to completion, in order, on the calling thread.
// Kernel faults (out-of-bounds access, a barrier only some threads reach...) throw bm errors.
void run_kernel(const LaunchSpec& spec);

}  // namespace bm::msl
