// What a device's implementation provides: memory, its queue, and a kernel per (op, dtype).
#pragma once
#include <array>
#include <memory>
#include <string>

#include "core/dtype.h"
#include "core/op_registry.h"
#include "core/storage.h"
#include "core/memory.h"

namespace bm {

class Backend {
 public:
  virtual ~Backend() = default;
  // Memory the host may write at once: no queued work uses it (scalar_tensor, to_device...).
  virtual std::shared_ptr<Storage> allocate(size_t nbytes) = 0;
  // Memory that only kernels queued from now on will write (the dispatcher's outputs). A queued
  // backend may hand back a freed buffer that earlier queued work still reads or writes: its one
  // in-order queue runs that work first, and the host reads it only after waiting for the queue.
  virtual std::shared_ptr<Storage> allocate_kernel_output(size_t nbytes) { return allocate(nbytes); }
  // Waits for every launch queued on this device (a no-op for synchronous backends).
  virtual void synchronize() {}
  // Waits until `s` holds the results of the work queued so far that writes it.
  virtual void wait_for(const Storage& s) { synchronize(); }
  virtual std::string description() const = 0;
  // Memory accounting and the limit of this device (core/memory.h).
  virtual MemoryAccount& memory() = 0;
  // Returns the device allocator's idle cached blocks to the system.
  virtual void empty_cache() = 0;

  Kernel kernel(OpId op, DType dt) const { return kernels_[int(op)][int(dt)]; }
  void set_kernel(OpId op, DType dt, Kernel k) { kernels_[int(op)][int(dt)] = k; }

  Device* device = nullptr;

 private:
  std::array<std::array<Kernel, kNumDTypes>, kNumOps> kernels_{};
};

}  // namespace bm
