#include "cpu/allocator.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/errors.h"
#include "core/memory.h"

namespace bm::cpu {

namespace {

constexpr size_t kCacheMin = size_t(1) << 20;      // blocks this large are cached when freed
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kCacheLimit = size_t(4) << 30;    // at most this many bytes sit idle in the cache
constexpr size_t kAlign = 64;

struct Cache {
  std::mutex m;
  std::multimap<size_t, void*> free_blocks;  // rounded size -> block
  size_t bytes = 0;
};

// Blocks up to 1 MiB are kept on per-size-class free lists. For tiny tensors and 0-d scalars,
// posix_memalign and free cost more than the rest of a 4-element `a + b` together. Blocks of
// 64 KiB to 1 MiB (batch-1 activations, kernels' packing scratch) went back to the system when
// freed and came again as fresh pages: ResNet-18 at batch 1 took about 900 page faults a forward
// pass (a 3x3 stride-2 convolution's scratch 70 a call), each a few microseconds on a VM.
// Classes are powers of two from 64 bytes to 1 MiB; each holds at most kSmallPerClass idle
// blocks and at most kClassIdleBytes of them (16 blocks of 1 MiB).
constexpr int kSmallClasses = 15;  // 64 << 14 == 1 MiB
constexpr size_t kSmallMax = kAlign << (kSmallClasses - 1);
constexpr size_t kSmallPerClass = 64;
constexpr size_t kClassIdleBytes = size_t(16) << 20;
size_t class_capacity(int k) {
  const size_t by_bytes = kClassIdleBytes / (kAlign << k);
  return by_bytes < kSmallPerClass ? by_bytes : kSmallPerClass;
}

struct SmallCache {
  std::mutex m;
  std::vector<void*> free_blocks[kSmallClasses];
};

SmallCache& small_cache() {
  static SmallCache* c = new SmallCache();  // leaked, like cache()
  return *c;
}

int small_class(size_t n) {
  int k = 0;
  while ((kAlign << k) < n) ++k;
  return k;
}

Cache& cache() {
  static Cache* c = new Cache();  // leaked: tensors may be freed during static destruction
  return *c;
}

size_t round_size(size_t n) { return n >= kCacheMin ? (n + kHugePage - 1) / kHugePage * kHugePage : n; }

void* raw_alloc(size_t n) {
  size_t align = n >= kCacheMin ? kHugePage : kAlign;
  void* p = nullptr;
  if (posix_memalign(&p, align, n ? n : kAlign) != 0) return nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Huge pages: a 40 MB tensor takes 20 page faults instead of 10,000.
  if (n >= kCacheMin) madvise(p, n, MADV_HUGEPAGE);
#endif
  return p;
}

}  // namespace

MemoryAccount& host_memory() {
  static MemoryAccount* a = new MemoryAccount("cpu");  // leaked, like cache(): frees run at static exit
  return *a;
}

namespace {

// The block a request of nbytes gets: its small class, or its rounded size.
size_t block_size(size_t nbytes) { return nbytes <= kSmallMax ? kAlign << small_class(nbytes) : round_size(nbytes); }

void* take_cached(size_t n) {
  if (n <= kSmallMax) {
    SmallCache& sc = small_cache();
    std::lock_guard<std::mutex> lk(sc.m);
    std::vector<void*>& fl = sc.free_blocks[small_class(n)];
    if (fl.empty()) return nullptr;
    void* p = fl.back();
    fl.pop_back();
    return p;
  }
  if (n < kCacheMin) return nullptr;
  Cache& c = cache();
  std::lock_guard<std::mutex> lk(c.m);
  auto it = c.free_blocks.find(n);
  if (it == c.free_blocks.end()) return nullptr;
  void* p = it->second;
  c.free_blocks.erase(it);
  c.bytes -= n;
  return p;
}

}  // namespace

void* host_alloc(size_t nbytes) {
  const size_t n = block_size(nbytes);
  MemoryAccount& acct = host_memory();
  try {
    acct.reserve(n, nbytes);
  } catch (const OutOfMemoryError&) {
    host_cache_clear();  // past the limit: give the idle memory back before raising
    throw;
  }
  if (void* p = take_cached(n)) {
    acct.cache_hit(n);
    return p;
  }
  if (acct.cache_over_limit()) {  // keep what the allocator holds (in use + cached) within the limit
    acct.count_retry();
    host_cache_clear();
  }
  void* p = raw_alloc(n);
  if (!p) {
    acct.count_retry();
    host_cache_clear();
    p = raw_alloc(n);
  }
  if (!p) {
    acct.unreserve(n, nbytes);
    acct.system_refused(n, nbytes);
  }
  return p;
}

void host_free(void* p, size_t nbytes) {
  if (!p) return;
  const size_t n = block_size(nbytes);
  MemoryAccount& acct = host_memory();
  if (n <= kSmallMax) {
    SmallCache& sc = small_cache();
    std::lock_guard<std::mutex> lk(sc.m);
    const int k = small_class(n);
    std::vector<void*>& fl = sc.free_blocks[k];
    if (fl.size() < class_capacity(k)) {
      if (fl.capacity() == 0) fl.reserve(class_capacity(k));  // no reallocation while in use
      fl.push_back(p);
      acct.release(n, nbytes, true);
      return;
    }
  } else if (n >= kCacheMin) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lk(c.m);
    if (c.bytes + n <= kCacheLimit) {
      c.free_blocks.emplace(n, p);
      c.bytes += n;
      acct.release(n, nbytes, true);
      return;
    }
  }
  std::free(p);
  acct.release(n, nbytes, false);
}

void host_cache_clear() {
  size_t dropped = 0;
  {
    SmallCache& sc = small_cache();
    std::lock_guard<std::mutex> lk(sc.m);
    for (int k = 0; k < kSmallClasses; ++k) {
      std::vector<void*>& fl = sc.free_blocks[k];
      for (void* p : fl) std::free(p);
      dropped += fl.size() * (kAlign << k);
      fl.clear();
    }
  }
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> lk(c.m);
    for (auto& kv : c.free_blocks) std::free(kv.second);
    c.free_blocks.clear();
    dropped += c.bytes;
    c.bytes = 0;
  }
  host_memory().cache_dropped(dropped);
}

}  // namespace bm::cpu
