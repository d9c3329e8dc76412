// A block of device memory. All our devices (cpu, Metal shared storage, the simulator) expose a
// host-addressable pointer; `handle` carries a backend's own buffer object when it has one.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace bm {

struct Device;

struct Storage {
  Device* device = nullptr;
  void* data = nullptr;
  size_t nbytes = 0;
  void* handle = nullptr;
  // Bumped by every in-place write (shared by all views of the storage): autograd refuses a saved
  // tensor whose storage changed after it was saved. Atomic: the autograd engine bumps it with the
  // GIL released while Python threads may read it.
  std::atomic<uint64_t> version{0};
  // Memory someone else marked read-only (a NumPy array with writeable=False, np.broadcast_to, a
  // memmap opened with mode 'r'): every write into it is refused by check_writable (core/tensor.h).
  bool readonly = false;
  // A number no other storage of this process gets (addresses are reused; this is not).
  const uint64_t id = next_id();
  // Whether the memory's address has left bessemer's hands (numpy(), __array__, the buffer
  // protocol, __dlpack__, raw bytes for files, _data_ptr) or came from outside (from_numpy,
  // from_dlpack): then code bessemer does not see can write it. False only for memory a backend
  // allocated and never handed out; while it is false every write goes through an op that bumps
  // `version` (run_op_into, copy_into, the autograd engine's accumulation, the optimizer steps),
  // so (id, version) identifies the contents: the CPU convolution's filter cache relies on it
  // (cpu/conv_pack_cache.h). A new way of handing out an address must set it.
  std::atomic<bool> exposed{true};
  std::function<void(Storage&)> release;  // returns the memory to its owner (allocator, numpy...)
  Storage() { live_count().fetch_add(1, std::memory_order_relaxed); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() {
    if (release) release(*this);
    live_count().fetch_sub(1, std::memory_order_relaxed);
  }
  static uint64_t next_id() {
    static std::atomic<uint64_t> n{0};
    return n.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  // Storages alive in the process: the leak check of the training tests (flat over many steps).
  static std::atomic<int64_t>& live_count() {
    static std::atomic<int64_t> n{0};
    return n;
  }
};

}  // namespace bm
