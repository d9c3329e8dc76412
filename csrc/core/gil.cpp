#include "core/gil.h"

#include <atomic>
#include <deque>
#include <mutex>

namespace bm {

namespace {
// One atomic word for both hooks, so a reader never sees one hook of a pair without the other.
std::atomic<const GilHooks*> g_hooks{nullptr};
}  // namespace

void set_gil_hooks(GilHooks hooks) {
  // Pairs are few (installed at import, removed and restored by a test) and each is kept for the
  // process (a deque never moves its elements), so a pointer loaded by another thread stays valid.
  static std::mutex m;
  static auto* pairs = new std::deque<GilHooks>();  // leaked on purpose, reachable
  std::lock_guard<std::mutex> lk(m);
  const GilHooks* p = nullptr;
  if (hooks.release && hooks.restore) {
    pairs->push_back(hooks);
    p = &pairs->back();
  }
  g_hooks.store(p, std::memory_order_release);
}

GilHooks gil_hooks() {
  const GilHooks* h = g_hooks.load(std::memory_order_acquire);
  return h ? *h : GilHooks{};
}

}  // namespace bm
