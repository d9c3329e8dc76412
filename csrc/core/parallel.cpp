#include "core/parallel.h"

#include "core/memory.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace bm {

namespace {

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
    std::lock_guard<std::mutex> lk(m_);
    quit_ = false;
    for (int i = 0; i < n - 1; ++i) workers_.emplace_back([this, i] { loop(i); });
    size_.store(n, std::memory_order_relaxed);
  }

  // One parallel region at a time: kernels called from several Python threads at once (the GIL is
  // released while they run) queue here, each still using every worker when its turn comes.
  void run(int tasks, const std::function<void(int)>& task) {
    std::unique_lock<std::mutex> call_lock(call_m_);
    {
      std::lock_guard<std::mutex> lk(m_);
      task_ = &task;
      ntasks_ = tasks;
      next_ = 1;  // task 0 runs on the caller
      pending_ = tasks - 1;
      error_ = nullptr;
      ++generation_;
    }
    cv_.notify_all();
    run_one(0);
    while (true) {  // the caller also takes tasks
      int t;
      {
        std::lock_guard<std::mutex> lk(m_);
        if (next_ >= ntasks_) break;
        t = next_++;
      }
      run_one(t);
    }
    std::unique_lock<std::mutex> lk(m_);
    done_cv_.wait(lk, [&] { return pending_ == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run_one(int t) {
    try {
      (*task_)(t);
    } catch (...) {
      std::lock_guard<std::mutex> lk(m_);
      if (!error_) error_ = std::current_exception();
    }
    if (t != 0) {
      std::lock_guard<std::mutex> lk(m_);
      if (--pending_ == 0) done_cv_.notify_all();
    }
  }

  void loop(int) {
    uint64_t seen = 0;
    while (true) {
      int t;
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return quit_ || (generation_ != seen && next_ < ntasks_); });
        if (quit_) return;
        t = next_++;
        if (next_ >= ntasks_) seen = generation_;
      }
      run_one(t);
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lk(m_);
      quit_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  std::mutex call_m_, m_;
  std::atomic<int> size_{1};
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> workers_;
  const std::function<void(int)>* task_ = nullptr;
  int ntasks_ = 0, next_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
  bool quit_ = false;
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

int num_threads() { return pool().size(); }
void set_num_threads(int n) { pool().resize(std::max(1, n)); }

void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  int64_t n = end - begin;
  if (n <= 0) return;
  int64_t chunks = std::min<int64_t>(num_threads(), (n + grain - 1) / std::max<int64_t>(grain, 1));
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
