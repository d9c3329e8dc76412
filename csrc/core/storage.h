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
  std::function<void(Storage&)> release;  // returns the memory to its owner (allocator, numpy...)
  Storage() { live_count().fetch_add(1, std::memory_order_relaxed); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage() {
    if (release) release(*this);
    live_count().fetch_sub(1, std::memory_order_relaxed);
  }
  // Storages alive in the process: the leak check of the training tests (flat over many steps).
  static std::atomic<int64_t>& live_count() {
    static std::atomic<int64_t> n{0};
    return n;
  }
};

}  // namespace bm
