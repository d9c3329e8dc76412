// Host memory for cpu tensors. Large blocks are cached when freed and reused: for big elementwise
// ops the page faults of fresh memory cost more than the arithmetic. Small blocks (<= 64 KiB) are
// kept on bounded per-size free lists, since for tiny ops malloc/free dominate.
#pragma once
#include <cstddef>

namespace bm::cpu {

void* host_alloc(size_t nbytes);  // throws OutOfMemoryError
void host_free(void* p, size_t nbytes);
void host_cache_clear();
size_t host_cache_bytes();  // idle bytes in the large-block cache

}  // namespace bm::cpu
