#include "core/determinism.h"

#include <array>
#include <atomic>
#include <cstdio>

#include "core/errors.h"

namespace bm {

namespace {

std::atomic<bool> g_on{false}, g_warn_only{false};
std::atomic<WarningHook> g_hook{nullptr};

uint32_t type_bit(DeviceType t) { return 1u << uint32_t(t); }

// Per op, a bit per DeviceType whose kernel is not deterministic. Atomic so a test's mark is seen by
// ops running in other threads without a lock on the hot path.
std::array<std::atomic<uint32_t>, kNumOps>& masks() {
  static auto* m = [] {
    auto* a = new std::array<std::atomic<uint32_t>, kNumOps>();  // leaked: lives for the process
    for (auto& x : *a) x.store(0, std::memory_order_relaxed);
#define BM_NONDET_MARK(op, type) (*a)[size_t(OpId::op)] |= type_bit(DeviceType::type);
    BM_NONDETERMINISTIC_OPS(BM_NONDET_MARK)
#undef BM_NONDET_MARK
    return a;
  }();
  return *m;
}

}  // namespace

void set_deterministic_algorithms(bool on, bool warn_only) {
  g_warn_only.store(warn_only, std::memory_order_relaxed);
  g_on.store(on, std::memory_order_release);
}
bool deterministic_algorithms_enabled() { return g_on.load(std::memory_order_acquire); }
bool deterministic_warn_only() { return g_warn_only.load(std::memory_order_relaxed); }

bool nondeterministic_on(OpId op, DeviceType t) {
  return masks()[size_t(op)].load(std::memory_order_relaxed) & type_bit(t);
}

void set_nondeterministic_for_testing(OpId op, DeviceType t, bool on) {
  if (on) masks()[size_t(op)].fetch_or(type_bit(t));
  else masks()[size_t(op)].fetch_and(~type_bit(t));
}

void set_warning_hook(WarningHook hook) { g_hook.store(hook); }

void check_deterministic(OpId op, const Device& dev) {
  if (!deterministic_algorithms_enabled() || !nondeterministic_on(op, dev.type)) return;
  std::string name = op_row(op).name;
  std::string msg = "[" + name + "] does not have a deterministic implementation on " + dev.type_name +
                    ", but you set 'bessemer.use_deterministic_algorithms(True)'. Turn it off with "
                    "bessemer.use_deterministic_algorithms(False), or pass warn_only=True to be warned "
                    "instead, or run " + name + " on another device";
  if (!deterministic_warn_only()) throw Error(msg);
  if (WarningHook hook = g_hook.load()) hook(msg);
  else std::fprintf(stderr, "Warning: %s\n", msg.c_str());
}

}  // namespace bm
