// Filters rearranged for a CPU convolution kernel (Winograd's transform domain, the product
// kernel's panels), kept for the next call with the same filters: inference runs each layer's
// filters many times. An entry is found by content, never by address or version counter: a hit
// compares the filters byte for byte with the copy kept beside the rearrangement, so no stale
// entry can be used whoever wrote the memory (a NumPy array behind bm.from_numpy included).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace bm::cpu {

struct PackedFilters {
  int kind;                   // which rearrangement (each caller its own)
  int64_t rows, cols;         // the filters as a rows x cols matrix
  std::vector<float> src;     // the filters they were made from
  std::vector<float> packed;  // the rearrangement
  size_t bytes() const { return (src.size() + packed.size()) * sizeof(float); }
};

// The entry for (kind, the rows x cols row-major matrix w), made by make(packed) on a miss
// (packed comes zeroed, `packed_size` floats). Entries over half the budget are made, not kept.
std::shared_ptr<const PackedFilters> packed_filters(int kind, const float* w, int64_t rows, int64_t cols,
                                                    size_t packed_size,
                                                    const std::function<void(float* packed)>& make);

}  // namespace bm::cpu
