// The cache of rearranged convolution filters (conv_pack_cache.h): least recently used first out,
// within a byte budget.
#include "cpu/conv_pack_cache.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <list>
#include <mutex>
#include <vector>

#include "core/parallel.h"
#include "core/storage.h"

namespace bm::cpu {

namespace {
// ResNet-18 holds 113 MiB here (its filters, their copies, the Winograd domain's 16/9 more), and a
// model that runs its layers in a loop larger than the budget misses on every layer (least recently
// used is always the next one wanted): 96 MiB made ResNet-18 repack every filter on every call.
// 256 MiB leaves room for ResNet-50-sized models.
constexpr size_t kCacheBytes = size_t(256) << 20;

// Whether a and b hold the same n floats, byte for byte. Every call of a cached layer compares its
// filters with the kept copy (ResNet-18 reads 2 x 45 MiB per inference, 4-6 ms of a 27 ms batch
// of one on 2 cores), so large filters are compared in slices on the thread pool: one core alone
// does not reach the memory's bandwidth. The first slice goes first: other filters of the same
// shape differ there.
bool same_floats(const float* a, const float* b, size_t n) {
  constexpr size_t kSlice = size_t(1) << 16;  // floats
  const size_t first = std::min(n, kSlice);
  if (std::memcmp(a, b, first * sizeof(float)) != 0) return false;
  if (n == first) return true;
  std::atomic<bool> differ{false};
  const int64_t slices = int64_t((n - first + kSlice - 1) / kSlice);
  parallel_for(0, slices, 1, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1 && !differ.load(std::memory_order_relaxed); ++s) {
      const size_t at = first + size_t(s) * kSlice, len = std::min(kSlice, n - at);
      if (std::memcmp(a + at, b + at, len * sizeof(float)) != 0) differ.store(true, std::memory_order_relaxed);
    }
  });
  return !differ.load();
}
}  // namespace

std::shared_ptr<const PackedFilters> packed_filters(int kind, const float* w, int64_t rows, int64_t cols,
                                                    size_t packed_size,
                                                    const std::function<void(float* packed)>& make,
                                                    FilterOrigin origin) {
  static std::mutex mu;
  static std::list<std::shared_ptr<const PackedFilters>> lru;  // most recently used first
  static size_t held = 0;
  const size_t n = size_t(rows * cols);
  // Read before the filters are: a write after this makes the version move on, so an entry keyed
  // on it can only be older than the contents it was made from, never newer.
  const bool keyed = origin.storage && !origin.storage->exposed.load();
  const uint64_t version = keyed ? origin.storage->version.load() : 0;
  auto same_origin = [&](const PackedFilters& e) {
    return keyed && e.keyed && e.storage_id == origin.storage->id && e.offset == origin.offset && e.version == version;
  };
  std::vector<std::shared_ptr<const PackedFilters>> candidates;  // same kind and shape, most recent first
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& e : lru)
      if (e->kind == kind && e->rows == rows && e->cols == cols) candidates.push_back(e);
  }
  for (const auto& c : candidates) {
    if (!same_origin(*c) && !same_floats(c->src.data(), w, n)) continue;
    std::lock_guard<std::mutex> lock(mu);  // entries never change: only its place in the list
    for (auto it = lru.begin(); it != lru.end(); ++it) {
      if (*it == c) {
        lru.splice(lru.begin(), lru, it);
        break;
      }
    }
    return c;
  }
  auto e = std::make_shared<PackedFilters>();
  e->kind = kind, e->rows = rows, e->cols = cols;
  if (keyed) e->keyed = true, e->storage_id = origin.storage->id, e->offset = origin.offset, e->version = version;
  e->src.assign(w, w + n);
  e->packed.resize(packed_size);
  make(e->packed.data());
  if (e->bytes() <= kCacheBytes / 2) {
    std::lock_guard<std::mutex> lock(mu);
    if (keyed) {  // an entry from the same place at an older version: those contents are gone (training)
      for (auto it = lru.begin(); it != lru.end();) {
        const PackedFilters& o = **it;
        if (o.keyed && o.kind == kind && o.storage_id == e->storage_id && o.offset == e->offset) {
          held -= o.bytes();
          it = lru.erase(it);
        } else {
          ++it;
        }
      }
    }
    lru.push_front(e);
    held += e->bytes();
    while (held > kCacheBytes) {
      held -= lru.back()->bytes();
      lru.pop_back();
    }
  }
  return e;
}

std::shared_ptr<const PackedFilters> row_blocked_filters(int kind, const float* w, int64_t O, int64_t K, int64_t rows,
                                                         FilterOrigin origin) {
  const int64_t blocks = (O + rows - 1) / rows;
  return packed_filters(kind, w, O, K, size_t(blocks * rows * K), [&](float* a) {
    parallel_for(0, O, std::max<int64_t>(1, 4096 / std::max<int64_t>(K, 1)), [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o)
        for (int64_t kk = 0; kk < K; ++kk) a[((o / rows) * K + kk) * rows + o % rows] = w[o * K + kk];
    });
  }, origin);
}

}  // namespace bm::cpu
