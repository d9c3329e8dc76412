// The Metal backend: a bm::Backend over runtime.h. One instance per device, shared by every handle
// to it (devices are interned), with one ordered queue: launches are encoded into the current
// command buffer, which is committed when a read needs its results or a batch limit is reached.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/tensor.h"
#include "metal/runtime.h"

namespace bm::metal {

struct QueueStats {
  uint64_t dispatches = 0;  // kernels encoded
  uint64_t commits = 0;     // command buffers committed
  uint64_t waits = 0;       // times the host waited for the queue
};

class MetalBackend final : public Backend {
 public:
  MetalBackend(std::unique_ptr<Runtime> rt, std::string label);
  ~MetalBackend() override;

  std::shared_ptr<Storage> allocate(size_t nbytes) override;
  std::shared_ptr<Storage> allocate_kernel_output(size_t nbytes) override;
  void synchronize() override;
  void wait_for(const Storage& s) override;
  std::string description() const override;
  MemoryAccount& memory() override { return mem_; }
  void empty_cache() override;

  Runtime& runtime() { return *rt_; }
  QueueStats stats() const;
  void reset_stats();
  // The kernel names launched since the last take (tools/kernel_cover.py picks the tests that
  // launch every kernel, for compute-sanitizer); recorded only while on.
  void set_kernel_log(bool on);
  std::vector<std::string> take_kernel_log();
  // Launches per command buffer before it is committed without waiting for a read.
  static constexpr int kBatchLimit = 256;

  // One kernel launch. Buffers are bound at offset 0 (shaders take element offsets in their
  // argument structs); `args` is copied with set_bytes at index `args_index`.
  struct Binding {
    const Tensor* tensor;
    uint32_t index;
  };
  void dispatch(const std::string& kernel, const std::vector<Binding>& buffers, const void* args, size_t args_len,
                uint32_t args_index, Size3 grid, Size3 threadgroup, size_t threadgroup_memory = 0);
  // As dispatch, but `groups` counts whole threadgroups (dispatch_threadgroups).
  void dispatch_groups(const std::string& kernel, const std::vector<Binding>& buffers, const void* args,
                       size_t args_len, uint32_t args_index, Size3 groups, Size3 threadgroup,
                       size_t threadgroup_memory = 0);

  // The buffer behind a storage of this device.
  static const std::shared_ptr<Buffer>& buffer_of(const Storage& s);

 private:
  ComputeEncoder& encoder_for(const std::string& kernel, const std::vector<Binding>& buffers, const void* args,
                              size_t args_len, uint32_t args_index, size_t threadgroup_memory);
  void after_dispatch();
  void commit_locked();
  std::shared_ptr<Storage> allocate_impl(size_t nbytes, bool queued_use_ok);
  void release(Storage& s);
  void drop_cache();

  std::unique_ptr<Runtime> rt_;
  std::string label_;
  mutable std::mutex m_;
  std::unique_ptr<CommandBuffer> current_;
  int encoded_in_current_ = 0;
  // Committed, not yet waited for. Shared: every thread that synchronizes waits for each buffer
  // committed before its call, including those another thread is already waiting for.
  std::vector<std::shared_ptr<CommandBuffer>> in_flight_;
  QueueStats stats_;
  bool kernel_log_on_ = false;
  std::set<std::string> kernel_log_;
  // Freed buffers by rounded size. For the host, a cached buffer is reused only once no command
  // buffer holds it; for a kernel's output, at once (allocate_kernel_output).
  std::multimap<size_t, std::shared_ptr<Buffer>> cache_;
  size_t cached_bytes_ = 0;
  MemoryAccount mem_{"metal"};  // renamed by the device registry ("metal-sim:0")
};

MetalBackend& backend_of(const Tensor& t);

}  // namespace bm::metal
