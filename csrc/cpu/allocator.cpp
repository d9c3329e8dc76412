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

// Small blocks (tiny tensors, 0-d scalars) are kept on per-size-class free lists: posix_memalign
// and free cost more than the rest of a 4-element `a + b` together. Classes are powers of two
// from 64 bytes to 64 KiB, each holding at most kSmallPerClass idle blocks.
constexpr int kSmallClasses = 11;  // 64 << 10 == 64 KiB
constexpr size_t kSmallMax = kAlign << (kSmallClasses - 1);
constexpr size_t kSmallPerClass = 64;

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

void* host_alloc(size_t nbytes) {
  if (nbytes <= kSmallMax) {
    int k = small_class(nbytes);
    SmallCache& sc = small_cache();
    {
      std::lock_guard<std::mutex> lk(sc.m);
      std::vector<void*>& fl = sc.free_blocks[k];
      if (!fl.empty()) {
        void* p = fl.back();
        fl.pop_back();
        return p;
      }
    }
    nbytes = kAlign << k;  // allocate the whole class size so any block of the class can be reused
  }
  size_t n = round_size(nbytes);
  if (n >= kCacheMin) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lk(c.m);
    auto it = c.free_blocks.find(n);
    if (it != c.free_blocks.end()) {
      void* p = it->second;
      c.free_blocks.erase(it);
      c.bytes -= n;
      return p;
    }
  }
  void* p = raw_alloc(n);
  if (!p) {
    host_cache_clear();
    p = raw_alloc(n);
  }
  if (!p) throw OutOfMemoryError("[alloc] cannot allocate " + std::to_string(nbytes) + " bytes on cpu");
  return p;
}

void host_free(void* p, size_t nbytes) {
  if (!p) return;
  if (nbytes <= kSmallMax) {
    SmallCache& sc = small_cache();
    std::lock_guard<std::mutex> lk(sc.m);
    std::vector<void*>& fl = sc.free_blocks[small_class(nbytes)];
    if (fl.size() < kSmallPerClass) {
      if (fl.capacity() == 0) fl.reserve(kSmallPerClass);  // no reallocation while in use
      fl.push_back(p);
      return;
    }
  }
  size_t n = round_size(nbytes);
  if (n >= kCacheMin) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lk(c.m);
    if (c.bytes + n <= kCacheLimit) {
      c.free_blocks.emplace(n, p);
      c.bytes += n;
      return;
    }
  }
  std::free(p);
}

void host_cache_clear() {
  {
    SmallCache& sc = small_cache();
    std::lock_guard<std::mutex> lk(sc.m);
    for (auto& fl : sc.free_blocks) {
      for (void* p : fl) std::free(p);
      fl.clear();
    }
  }
  Cache& c = cache();
  std::lock_guard<std::mutex> lk(c.m);
  for (auto& kv : c.free_blocks) std::free(kv.second);
  c.free_blocks.clear();
  c.bytes = 0;
}

size_t host_cache_bytes() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lk(c.m);
  return c.bytes;
}

}  // namespace bm::cpu
