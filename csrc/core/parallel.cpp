#include "core/parallel.h"

#include "core/memory.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace bm {

namespace {

// How long a worker (and a caller waiting for the last task) spins before it blocks: kernels come
// back to back, a few microseconds of Python apart, and a wake-up through the kernel costs 5-20 us,
// so spinning makes a small parallel region cost about a microsecond. Bounded, so an idle pool
// sleeps and costs no CPU.
constexpr auto kSpin = std::chrono::microseconds(100);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until done() holds or kSpin has passed; returns done().
template <typename Done>
bool spin_until(Done&& done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= until) return done();
  }
}

class Pool {
 public:
  explicit Pool(int n) { resize(n); }
  ~Pool() { stop(); }

  int size() const { return size_.load(std::memory_order_relaxed); }

  // Waits for the parallel region in flight (another Python thread's kernel may be in one: kernels
  // run without the GIL) before replacing the workers.
  void resize(int n) {
    std::lock_guard<std::mutex> call_lock(call_m_);
    stop();
    quit_.store(false);
    for (int i = 0; i < n - 1; ++i) workers_.emplace_back([this] { loop(); });
    size_.store(n, std::memory_order_relaxed);
  }

  // One parallel region at a time: kernels called from several Python threads at once (the GIL is
  // released while they run) queue here, each still using every worker when its turn comes.
  void run(int tasks, const std::function<void(int)>& task) {
    std::unique_lock<std::mutex> call_lock(call_m_);
    task_ = &task;
    error_ = nullptr;
    pending_.store(tasks);
    // Publishing the new state (generation, task count, next task 0) starts the region: workers
    // claim tasks from it by compare-and-swap, and a claim made against an older generation fails.
    const uint64_t gen = (state_.load() >> 32) + 1;
    state_.store(gen << 32 | uint64_t(tasks) << 16);
    if (sleepers_.load() > 0) {  // after the store: a worker going to sleep now sees it (seq_cst)
      std::lock_guard<std::mutex> lk(m_);
      cv_.notify_all();
    }
    work(gen);  // the caller takes tasks too
    if (!spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lk(m_);
      done_cv_.wait(lk, [&] { return pending_.load() == 0; });
    }
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // Claims and runs tasks of generation gen until none is left.
  void work(uint64_t gen) {
    uint64_t s = state_.load(std::memory_order_acquire);
    while ((s >> 32) == gen && (s & 0xffff) < ((s >> 16) & 0xffff)) {
      if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) {
        run_one(int(s & 0xffff));
        s = state_.load(std::memory_order_acquire);
      }
    }
  }

  void run_one(int t) {
    try {
      (*task_)(t);
    } catch (...) {
      std::lock_guard<std::mutex> lk(m_);
      if (!error_) error_ = std::current_exception();
    }
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lk(m_);  // the caller checks pending_ under m_: no lost wake-up
      done_cv_.notify_all();
    }
  }

  void loop() {
    uint64_t seen = state_.load() >> 32;
    while (true) {
      auto fresh = [&] { return quit_.load(std::memory_order_acquire) || (state_.load(std::memory_order_acquire) >> 32) != seen; };
      if (!spin_until(fresh)) {
        std::unique_lock<std::mutex> lk(m_);
        sleepers_.fetch_add(1);
        cv_.wait(lk, fresh);
        sleepers_.fetch_sub(1);
      }
      if (quit_.load()) return;
      seen = state_.load(std::memory_order_acquire) >> 32;
      work(seen);
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lk(m_);
      quit_.store(true);
      cv_.notify_all();
    }
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  std::mutex call_m_, m_;
  std::atomic<int> size_{1};
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> workers_;
  const std::function<void(int)>* task_ = nullptr;
  // generation (high 32 bits) | task count (bits 16-31) | next task to claim (bits 0-15)
  std::atomic<uint64_t> state_{0};
  std::atomic<int> pending_{0}, sleepers_{0};
  std::atomic<bool> quit_{false};
  std::exception_ptr error_;
};

int default_threads() {
  if (const char* e = std::getenv("BESSEMER_NUM_THREADS")) {
    int n = std::atoi(e);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

Pool& pool() {
  static Pool* p = new Pool(default_threads());  // leaked on purpose: no join at static exit
  return *p;
}

thread_local bool in_parallel = false;

}  // namespace

void cpu_pause() { cpu_relax(); }

int num_threads() { return pool().size(); }
void set_num_threads(int n) { pool().resize(std::max(1, n)); }

void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  int64_t n = end - begin;
  if (n <= 0) return;
  // (at most 65535 tasks: the pool's state word counts them in 16 bits)
  int64_t chunks = std::min<int64_t>({num_threads(), (n + grain - 1) / std::max<int64_t>(grain, 1), 65535});
  if (chunks <= 1 || in_parallel) {
    fn(begin, end);
    return;
  }
  int64_t per = (n + chunks - 1) / chunks;
  const char* op = current_op();  // workers' allocations (kernel scratch) name the caller's op
  pool().run(int(chunks), [&](int t) {
    OpScope scope(op);
    struct Flag {  // nested parallel_for calls run inline; reset even if fn throws
      Flag() { in_parallel = true; }
      ~Flag() { in_parallel = false; }
    } flag;
    int64_t b = begin + t * per, e = std::min(end, b + per);
    if (b < e) fn(b, e);
  });
}

}  // namespace bm
