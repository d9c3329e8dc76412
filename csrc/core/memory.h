// Memory accounting and the memory limit, one MemoryAccount per device (torch's
// torch.cuda.memory_stats / MLX's mx.metal memory calls). The device's allocator calls it on every
// block it hands out, takes back, caches or returns to the system, so the numbers are what the
// allocator really holds (rounded block sizes), not what tensors asked for. Memory the device does
// not allocate (NumPy arrays borrowed by from_numpy) is not counted, as torch does not count it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace bm {

struct MemoryStats {
  uint64_t allocated = 0, allocated_peak = 0;  // bytes of blocks held by live tensors (and scratch)
  uint64_t requested = 0, requested_peak = 0;  // bytes those blocks' owners asked for (before rounding)
  uint64_t cached = 0;                         // idle blocks kept for reuse; empty_cache frees them
  uint64_t reserved_peak = 0;                  // peak of allocated + cached
  uint64_t num_allocs = 0, num_frees = 0;      // blocks handed out / taken back
  uint64_t num_cache_hits = 0;                 // allocations served from the cache
  uint64_t num_alloc_retries = 0;              // times the cache was emptied so a request could fit
  uint64_t num_ooms = 0;                       // requests refused (the limit, or the system)
  uint64_t limit = 0;                          // 0: no limit
};

class MemoryAccount {
 public:
  explicit MemoryAccount(std::string device_name) : device_(std::move(device_name)) {}
  void set_device_name(const std::string& name);  // by the device registry, once the name is known

  // Counts a block of `block` bytes (asked for: `requested`) as allocated. OutOfMemoryError naming
  // the current op when the limit would be passed; nothing is counted then.
  void reserve(size_t block, size_t requested);
  // The block reserved could not be had after all.
  void unreserve(size_t block, size_t requested);
  // A live block freed: kept in the allocator's cache (`to_cache`) or returned to the system.
  void release(size_t block, size_t requested, bool to_cache);
  void cache_hit(size_t block);        // a cached block handed out again (after reserve)
  void cache_dropped(size_t bytes);    // cached blocks returned to the system
  // allocated + cached passes the limit: the allocator should empty its cache before asking the
  // system for more, so the memory it holds stays within the limit where it can.
  bool cache_over_limit() const;
  void count_retry();
  // OutOfMemoryError for a request the system refused.
  [[noreturn]] void system_refused(size_t block, size_t requested);

  MemoryStats stats() const;
  void reset_peaks();
  uint64_t set_limit(uint64_t bytes);  // returns the previous limit

 private:
  std::string message(size_t block, size_t requested, const std::string& why) const;

  std::string device_;
  mutable std::mutex m_;
  MemoryStats s_;
};

// The op on whose behalf memory is allocated, named in OutOfMemoryError messages. The allocator
// cannot know which op runs, so entry points (the dispatcher, factories, composite ops) open a
// scope; the outermost one on a thread wins, as it is the call the user made. parallel_for carries
// it to its worker threads.
const char* current_op();
class OpScope {
 public:
  explicit OpScope(const char* name);
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  bool set_ = false;
};

// "4.00 MiB" / "512 B" / "1.50 GiB": sizes in messages.
std::string format_bytes(uint64_t n);

}  // namespace bm
