// Seeded, counter-based randomness (DESIGN rule 6): a generator is (seed, offset); every draw takes a
// fresh range of Philox counter blocks, so consecutive draws differ and a seed replays exactly.
#pragma once
#include <cstdint>
#include <mutex>

#include "core/tensor.h"

namespace bm {

// The seed every device's default generator starts from (torch's default seed), so a fresh process
// draws the same numbers on every backend without a manual_seed call.
constexpr uint64_t kDefaultSeed = 67280421310721ull;

struct Generator {
  explicit Generator(Device* d) : device(d) {}
  Device* device;

  void manual_seed(uint64_t s) {
    std::lock_guard<std::mutex> lk(m);
    seed_ = s;
    offset_ = 0;
  }
  uint64_t seed() const {
    std::lock_guard<std::mutex> lk(m);
    return seed_;
  }
  uint64_t offset() const {
    std::lock_guard<std::mutex> lk(m);
    return offset_;
  }
  void set_offset(uint64_t o) {
    std::lock_guard<std::mutex> lk(m);
    offset_ = o;
  }
  // Reserves counter blocks for `numel` values (4 per block); returns (seed, first block). Under the
  // lock: draws from several threads get disjoint ranges, so they never repeat each other.
  std::pair<uint64_t, uint64_t> reserve(int64_t numel) {
    std::lock_guard<std::mutex> lk(m);
    uint64_t first = offset_;
    offset_ += uint64_t((numel + 3) / 4);
    return {seed_, first};
  }

 private:
  mutable std::mutex m;
  uint64_t seed_ = kDefaultSeed, offset_ = 0;
};

Generator& default_generator(Device* d);
void manual_seed_all(uint64_t seed);

// Fill `out` (any strides) from the generator: uniform in [low, high) or normal(mean, std).
void uniform_(const TensorPtr& out, double low, double high, Generator* gen = nullptr);
void normal_(const TensorPtr& out, double mean, double std, Generator* gen = nullptr);
// Integers in [low, high) (the randint row); low < high, both representable in out's dtype.
void randint_(const TensorPtr& out, int64_t low, int64_t high, Generator* gen = nullptr);
// A random permutation of 0 .. n-1 (torch.randperm): a Fisher-Yates shuffle driven by Philox words
// of the generator's stream, computed on the host so every device gets the same permutation for
// one seed; it takes n words of the stream (the generator's offset moves as for n uniform draws).
TensorPtr randperm(int64_t n, DType dtype, Device* device, Generator* gen = nullptr);

}  // namespace bm
