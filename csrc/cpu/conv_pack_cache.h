// Filters rearranged for a CPU convolution kernel (Winograd's transform domain, the product
// kernel's panels), kept for the next call with the same filters: inference runs each layer's
// filters many times. An entry is found by content, never by address or version counter: a hit
// compares the filters byte for byte with the copy kept beside the rearrangement, so no stale
// entry can be used whoever wrote the memory (a NumPy array behind bm.from_numpy included). The
// one exception: filters read straight from a storage whose address never left bessemer, where
// every write bumps the storage's version (core/storage.h), are found by (storage, offset,
// version) without the comparison, which reads twice the filters' bytes on every call.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace bm {
struct Storage;
}

namespace bm::cpu {

// Where the filters a call passes live: a tensor's storage and the byte offset in it, or nothing
// (a staged copy, scratch memory).
struct FilterOrigin {
  const Storage* storage = nullptr;
  size_t offset = 0;
};

struct PackedFilters {
  int kind;                   // which rearrangement (each caller its own)
  int64_t rows, cols;         // the filters as a rows x cols matrix
  std::vector<float> src;     // the filters they were made from
  std::vector<float> packed;  // the rearrangement
  // The storage (its id), offset and version the filters were read from, when they came from a
  // storage whose address bessemer never handed out (Storage::exposed false): a later call from
  // the same place at the same version finds the entry without comparing bytes.
  bool keyed = false;
  uint64_t storage_id = 0, version = 0;
  size_t offset = 0;
  size_t bytes() const { return (src.size() + packed.size()) * sizeof(float); }
};

// The entry for (kind, the rows x cols row-major matrix w), made by make(packed) on a miss
// (packed comes zeroed, `packed_size` floats). Entries over half the budget are made, not kept.
// origin: where w lives; the byte comparison is skipped only for an unexposed storage at the
// version the entry was made at.
std::shared_ptr<const PackedFilters> packed_filters(int kind, const float* w, int64_t rows, int64_t cols,
                                                    size_t packed_size,
                                                    const std::function<void(float* packed)>& make,
                                                    FilterOrigin origin = {});

// The O x K row-major filters w in blocks of `rows` rows, column by column: w[o][kk] at
// ((o / rows) K + kk) rows + o % rows, rows past O zero; cached as entry `kind`. The panel kernel's
// 6-row panels and the direct kernel's channel blocks.
std::shared_ptr<const PackedFilters> row_blocked_filters(int kind, const float* w, int64_t O, int64_t K, int64_t rows,
                                                         FilterOrigin origin = {});

}  // namespace bm::cpu
