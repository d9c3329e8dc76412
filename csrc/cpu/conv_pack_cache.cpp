// The cache of rearranged convolution filters (conv_pack_cache.h): least recently used first out,
// within a byte budget.
#include "cpu/conv_pack_cache.h"

#include <cstring>
#include <list>
#include <mutex>

namespace bm::cpu {

namespace {
// ResNet-18 holds 113 MiB here (its filters, their copies, the Winograd domain's 16/9 more), and a
// model that runs its layers in a loop larger than the budget misses on every layer (least recently
// used is always the next one wanted): 96 MiB made ResNet-18 repack every filter on every call.
// 256 MiB leaves room for ResNet-50-sized models.
constexpr size_t kCacheBytes = size_t(256) << 20;
}  // namespace

std::shared_ptr<const PackedFilters> packed_filters(int kind, const float* w, int64_t rows, int64_t cols,
                                                    size_t packed_size,
                                                    const std::function<void(float* packed)>& make) {
  static std::mutex mu;
  static std::list<std::shared_ptr<const PackedFilters>> lru;  // most recently used first
  static size_t held = 0;
  const size_t n = size_t(rows * cols);
  {
    std::lock_guard<std::mutex> lock(mu);
    for (auto it = lru.begin(); it != lru.end(); ++it) {
      const PackedFilters& e = **it;
      if (e.kind == kind && e.rows == rows && e.cols == cols && std::memcmp(e.src.data(), w, n * sizeof(float)) == 0) {
        lru.splice(lru.begin(), lru, it);
        return lru.front();
      }
    }
  }
  auto e = std::make_shared<PackedFilters>();
  e->kind = kind, e->rows = rows, e->cols = cols;
  e->src.assign(w, w + n);
  e->packed.resize(packed_size);
  make(e->packed.data());
  if (e->bytes() <= kCacheBytes / 2) {
    std::lock_guard<std::mutex> lock(mu);
    lru.push_front(e);
    held += e->bytes();
    while (held > kCacheBytes) {
      held -= lru.back()->bytes();
      lru.pop_back();
    }
  }
  return e;
}

}  // namespace bm::cpu
