// A small persistent thread pool: large elementwise and reduction kernels use every core.
#pragma once
#include <cstdint>
#include <functional>
#include <thread>

namespace bm {

int num_threads();
void set_num_threads(int n);
// Splits [begin, end) into at most num_threads() chunks of at least `grain` items and runs
// fn(chunk_begin, chunk_end) on each, the caller's thread included. Exceptions propagate.
void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// One pause of a spin-wait loop (the CPU's pause or yield hint).
void cpu_pause();

// Waits until done() holds: spins a while, then gives the CPU up between checks. For a short
// hand-over between the tasks of one parallel region, on a condition that a task already running
// on another thread makes true (never on a task not yet started: the pool may run it on this
// thread after the current one).
template <typename Done>
void wait_until(Done&& done) {
  for (int spins = 0; !done(); ++spins) {
    if (spins < 4096) cpu_pause();
    else std::this_thread::yield();
  }
}

}  // namespace bm
