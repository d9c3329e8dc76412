// runtime.h implemented on the MSL simulator: buffers are host memory, pipelines are the kernels
// the pre-pass registered, and a command buffer records its dispatches and runs them in order,
// synchronously, when committed. Dispatches are checked as Metal's validation layer would, at the
// call; kernel faults are caught at commit and rethrown by wait_until_completed().
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <vector>

#include "core/errors.h"
#include "metal/runtime.h"
#include "msl_sim/launch.h"

namespace bm::metal {

namespace {

constexpr size_t kMaxBytes = 4096;  // set_bytes limit, as Metal

class SimBuffer final : public Buffer {
 public:
  explicit SimBuffer(size_t length) : length_(length) {
    // Page-aligned like Metal's allocations, so vector loads of any width are aligned.
    size_t rounded = (length + 4095) / 4096 * 4096;
    data_ = std::aligned_alloc(4096, rounded);
    if (!data_) throw OutOfMemoryError("[metal-sim] cannot allocate a buffer of " + std::to_string(length) + " bytes");
    std::memset(data_, 0, rounded);
  }
  ~SimBuffer() override { std::free(data_); }
  void* contents() override { return data_; }
  size_t length() const override { return length_; }

 private:
  void* data_;
  size_t length_;
};

class SimPipeline final : public Pipeline {
 public:
  explicit SimPipeline(const msl::KernelInfo* k) : kernel(k), name_(k->host_name) {}
  const std::string& name() const override { return name_; }
  uint32_t max_total_threads_per_threadgroup() const override { return kernel->max_threads; }
  uint32_t thread_execution_width() const override { return msl::kSimdWidth; }
  const msl::KernelInfo* kernel;

 private:
  std::string name_;
};

// One recorded dispatch: the launch plus what keeps its memory alive.
struct Recorded {
  msl::LaunchSpec spec;
  std::shared_ptr<Buffer> buffers[msl::kMaxBufferSlots];
  std::shared_ptr<std::vector<char>> bytes[msl::kMaxBufferSlots];
};

uint32_t dim32(uint64_t v, const char* what) {
  if (v > 0xffffffffull) throw ValueError(std::string("[metal-sim] ") + what + " exceeds 2^32 - 1: " + std::to_string(v));
  return uint32_t(v);
}

msl::Dim3 dim3(const Size3& s, const char* what) {
  return msl::Dim3{dim32(s.width, what), dim32(s.height, what), dim32(s.depth, what)};
}

void check_index(uint32_t index, const char* what) {
  if (index >= uint32_t(msl::kMaxBufferSlots))
    throw ValueError(std::string("[metal-sim] ") + what + " index " + std::to_string(index) + " is past the last slot (30)");
}

class SimEncoder final : public ComputeEncoder {
 public:
  void set_pipeline(const Pipeline& p) override { state_.spec.kernel = static_cast<const SimPipeline&>(p).kernel; }

  void set_buffer(const std::shared_ptr<Buffer>& b, size_t offset, uint32_t index) override {
    check_index(index, "set_buffer");
    if (!b) throw ValueError("[metal-sim] set_buffer: null buffer at index " + std::to_string(index));
    if (offset > b->length())
      throw ValueError("[metal-sim] set_buffer: offset " + std::to_string(offset) + " past the end of a " +
                       std::to_string(b->length()) + "-byte buffer");
    state_.buffers[index] = b;
    state_.bytes[index].reset();
    state_.spec.buffers[index] = msl::BufferArg{static_cast<char*>(b->contents()) + offset, b->length() - offset, true, false};
  }

  void set_bytes(const void* data, size_t length, uint32_t index) override {
    check_index(index, "set_bytes");
    if (length > kMaxBytes)
      throw ValueError("[metal-sim] set_bytes: " + std::to_string(length) + " bytes exceed the limit of 4096");
    auto copy = std::make_shared<std::vector<char>>(static_cast<const char*>(data), static_cast<const char*>(data) + length);
    state_.buffers[index].reset();
    state_.bytes[index] = copy;
    state_.spec.buffers[index] = msl::BufferArg{copy->data(), length, true, true};
  }

  void set_threadgroup_memory_length(size_t length, uint32_t index) override {
    check_index(index, "set_threadgroup_memory_length");
    if (length % 16 != 0)
      throw ValueError("[metal-sim] set_threadgroup_memory_length: " + std::to_string(length) +
                       " bytes is not a multiple of 16");
    if (length > msl::kMaxThreadgroupMemory)
      throw ValueError("[metal-sim] set_threadgroup_memory_length: " + std::to_string(length) +
                       " bytes exceed the maximum of " + std::to_string(msl::kMaxThreadgroupMemory));
    state_.spec.threadgroup_memory[index] = length;
    state_.spec.threadgroup_set[index] = length > 0;
  }

  void dispatch_threads(Size3 grid, Size3 tg) override {
    msl::Dim3 g = dim3(grid, "grid size"), t = dim3(tg, "threadgroup size");
    msl::Dim3 groups{t.x ? (g.x + t.x - 1) / t.x : 0, t.y ? (g.y + t.y - 1) / t.y : 0, t.z ? (g.z + t.z - 1) / t.z : 0};
    record(groups, t, g);
  }

  void dispatch_threadgroups(Size3 groups, Size3 tg) override {
    Size3 grid{groups.width * tg.width, groups.height * tg.height, groups.depth * tg.depth};
    record(dim3(groups, "threadgroup count"), dim3(tg, "threadgroup size"), dim3(grid, "grid size"));
  }

  std::vector<Recorded> recorded;

 private:
  void record(msl::Dim3 groups, msl::Dim3 tg, msl::Dim3 grid) {
    Recorded r = state_;
    r.spec.threadgroups = groups;
    r.spec.threads_per_group = tg;
    r.spec.grid = grid;
    msl::validate_launch(r.spec);
    recorded.push_back(std::move(r));
  }
  Recorded state_;
};

class SimCommandBuffer final : public CommandBuffer {
 public:
  ComputeEncoder& compute_encoder() override {
    if (status_ != CommandStatus::Recording) throw Error("[metal-sim] compute_encoder() after commit()");
    return encoder_;
  }

  void commit() override {
    if (status_ != CommandStatus::Recording) throw Error("[metal-sim] command buffer committed twice");
    status_ = CommandStatus::Committed;
    try {
      for (const Recorded& r : encoder_.recorded) msl::run_kernel(r.spec);
      status_ = CommandStatus::Completed;
    } catch (...) {
      // As on a GPU, the failure surfaces when the work is waited on, not at submission.
      failure_ = std::current_exception();
      status_ = CommandStatus::Error;
    }
    encoder_.recorded.clear();  // releases the buffers, as Metal does on completion
  }

  void wait_until_completed() override {
    if (status_ == CommandStatus::Recording) throw Error("[metal-sim] wait_until_completed() before commit()");
    if (failure_) std::rethrow_exception(failure_);
  }

  CommandStatus status() const override { return status_; }

  std::string error() const override {
    if (!failure_) return "";
    try {
      std::rethrow_exception(failure_);
    } catch (const std::exception& e) {
      return e.what();
    } catch (...) {
      return "unknown error";
    }
  }

 private:
  SimEncoder encoder_;
  CommandStatus status_ = CommandStatus::Recording;
  std::exception_ptr failure_;
};

class SimRuntime final : public Runtime {
 public:
  std::string name() const override { return "MSL simulator"; }
  uint32_t max_threads_per_threadgroup() const override { return msl::kMaxThreadsPerGroup; }

  std::shared_ptr<Buffer> new_buffer(size_t length) override {
    if (length == 0) throw ValueError("[metal-sim] new_buffer: length must be positive");
    return std::make_shared<SimBuffer>(length);
  }

  const Pipeline& pipeline(const std::string& kernel) override {
    auto it = pipelines_.find(kernel);
    if (it != pipelines_.end()) return *it->second;
    const msl::KernelInfo* k = msl::find_kernel(kernel);
    if (!k) {
      throw Error("[metal-sim] no kernel named '" + kernel + "' in the shader library (" +
                  std::to_string(msl::kernel_names().size()) +
                  " kernels); is it instantiated with [[host_name(\"" + kernel + "\")]]?");
    }
    return *pipelines_.emplace(kernel, std::make_unique<SimPipeline>(k)).first->second;
  }

  std::unique_ptr<CommandBuffer> new_command_buffer() override { return std::make_unique<SimCommandBuffer>(); }

 private:
  std::map<std::string, std::unique_ptr<SimPipeline>> pipelines_;
};

}  // namespace

std::unique_ptr<Runtime> make_sim_runtime() { return std::make_unique<SimRuntime>(); }

}  // namespace bm::metal
