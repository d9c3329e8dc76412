// A small persistent thread pool: large elementwise and reduction kernels use every core.
#pragma once
#include <cstdint>
#include <functional>

namespace bm {

int num_threads();
void set_num_threads(int n);
// Splits [begin, end) into at most num_threads() chunks of at least `grain` items and runs
// fn(chunk_begin, chunk_end) on each, the caller's thread included. Exceptions propagate.
void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace bm
