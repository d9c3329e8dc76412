// The only door to the GPU. The Metal backend (csrc/metal/*.cpp) talks to a device through this
// interface and nothing else; three implementations sit behind it:
//   runtime_metal.cpp — metal-cpp, Apple only (one MTL::Device and one command queue per device);
//   runtime_sim.cpp   — the MSL simulator: shaders compiled as C++, run on the host;
//   runtime_cuda.cpp  — NVIDIA GPUs: the shaders translated to CUDA, compiled by NVRTC.
// No metal-cpp type appears here, so everything above this line builds and is tested on Linux.
//
// The model mirrors Metal's: shared-storage buffers the host reads and writes directly; compute
// pipelines looked up by kernel host name; a command buffer records dispatches through one compute
// encoder, runs them in order once committed, and reports failure when waited on.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace bm::metal {

// A grid or threadgroup extent, as MTLSize.
struct Size3 {
  uint64_t width = 1, height = 1, depth = 1;
};

// Device memory in shared storage mode: the host pointer stays valid for the buffer's lifetime.
// Shared ownership lets a command buffer keep the buffers it uses alive until it completes.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual void* contents() = 0;
  virtual size_t length() const = 0;
};

// A compiled kernel. Owned and cached by its Runtime; references stay valid as long as it.
class Pipeline {
 public:
  virtual ~Pipeline() = default;
  virtual const std::string& name() const = 0;
  virtual uint32_t max_total_threads_per_threadgroup() const = 0;
  virtual uint32_t thread_execution_width() const = 0;  // the SIMD width, 32 on Apple GPUs
};

// Records dispatches into its command buffer. Bindings persist from one dispatch to the next, as
// in Metal. Invalid arguments (a threadgroup larger than the pipeline allows, a slot index past
// 30, set_bytes over 4 KiB...) throw bm::ValueError at the call, before anything is recorded.
class ComputeEncoder {
 public:
  virtual ~ComputeEncoder() = default;
  virtual void set_pipeline(const Pipeline& pipeline) = 0;
  // Binds [[buffer(index)]] to `buffer` starting `offset` bytes in.
  virtual void set_buffer(const std::shared_ptr<Buffer>& buffer, size_t offset, uint32_t index) = 0;
  // Binds [[buffer(index)]] to a copy of `length` bytes (argument structs; at most 4096 bytes).
  virtual void set_bytes(const void* data, size_t length, uint32_t index) = 0;
  // Sizes the dynamic [[threadgroup(index)]] memory of each threadgroup (a multiple of 16 bytes).
  virtual void set_threadgroup_memory_length(size_t length, uint32_t index) = 0;
  // `grid` threads in all, in groups of `threadgroup`; groups at the grid's edge are smaller.
  virtual void dispatch_threads(Size3 grid, Size3 threadgroup) = 0;
  // `groups` whole threadgroups of `threadgroup` threads each.
  virtual void dispatch_threadgroups(Size3 groups, Size3 threadgroup) = 0;
};

enum class CommandStatus { Recording, Committed, Completed, Error };

class CommandBuffer {
 public:
  virtual ~CommandBuffer() = default;
  // The command buffer's one compute encoder; encoding ends at commit().
  virtual ComputeEncoder& compute_encoder() = 0;
  // Submits the recorded dispatches; they run in order (possibly before commit returns).
  virtual void commit() = 0;
  // Blocks until the dispatches have run. If they failed (a kernel fault, a GPU error), throws
  // the failure as a bm error — on every call, so nobody can wait and miss it. Several threads may
  // wait on one command buffer at once (MetalBackend::synchronize shares its in-flight list), so
  // what it releases on completion must be released once, under a lock.
  virtual void wait_until_completed() = 0;
  virtual CommandStatus status() const = 0;
  // The failure's message when status() is Error, else empty.
  virtual std::string error() const = 0;
};

// One per device.
class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual std::string name() const = 0;
  virtual uint32_t max_threads_per_threadgroup() const = 0;
  // A zero-filled shared buffer; `length` must be positive (Metal cannot make empty buffers).
  virtual std::shared_ptr<Buffer> new_buffer(size_t length) = 0;
  // The pipeline for a kernel host name, built on first use and cached. Throws bm::Error naming
  // the kernel if no shader defines it.
  virtual const Pipeline& pipeline(const std::string& kernel) = 0;
  virtual std::unique_ptr<CommandBuffer> new_command_buffer() = 0;
};

// The simulator (device "metal-sim"); available on every platform.
std::unique_ptr<Runtime> make_sim_runtime();

#ifdef BESSEMER_HAVE_CUDA
// NVIDIA GPU `ordinal` through the CUDA driver and NVRTC (runtime_cuda.cpp).
std::unique_ptr<Runtime> make_cuda_runtime(int ordinal);
// GPUs the CUDA runtime can drive (0 without a driver; see cuda/driver.h for why).
int cuda_device_count();
#endif

#ifdef BESSEMER_HAVE_METAL
// The system's default GPU through metal-cpp (runtime_metal.cpp); nullptr if there is none.
std::unique_ptr<Runtime> make_metal_runtime();
#endif

}  // namespace bm::metal
