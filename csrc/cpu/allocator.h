// Host memory for cpu tensors. Large blocks are cached when freed and reused: for big elementwise
// ops the page faults of fresh memory cost more than the arithmetic. Small blocks (<= 64 KiB) are
// kept on bounded per-size free lists, since for tiny ops malloc/free dominate.
// Every block is counted in host_memory() (the cpu device's MemoryAccount), which also holds the
// memory limit: scratch memory of kernels counts as well as tensors.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/memory.h"

namespace bm::cpu {

void* host_alloc(size_t nbytes);  // throws OutOfMemoryError (the limit, or the system)
void host_free(void* p, size_t nbytes);
void host_cache_clear();  // returns every idle block (both caches) to the system
MemoryAccount& host_memory();

// Kernel scratch of n elements from the allocator (its cache: no page faults per call, no
// zeroing), counted like tensors, freed at the end of the scope.
template <typename A>
struct Scratch {
  A* p = nullptr;
  size_t bytes = 0;
  explicit Scratch(int64_t n) : bytes(size_t(n > 1 ? n : 1) * sizeof(A)) { p = static_cast<A*>(host_alloc(bytes)); }
  ~Scratch() { host_free(p, bytes); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

}  // namespace bm::cpu
