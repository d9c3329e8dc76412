// Releasing the host language's lock (Python's GIL) while a kernel runs or the host waits for a
// device, so other Python threads run meanwhile. The core knows nothing of Python: the bindings
// install two hooks (bindings/module.cpp); without them (the C++ tests) the guard does nothing.
//
// The dispatcher (core/dispatch.cpp) holds a WithoutGil around each kernel call and
// wait_readable / synchronize (core/ops_data.cpp) around each device wait; nothing else in the core
// releases it, so all other core state (tensor metadata, autograd recording) is still touched under
// the GIL by Python threads. Inside the guard no Python object may be touched; code that must (a
// numpy-backed storage's release) takes the GIL back itself (py::gil_scoped_acquire).
#pragma once

namespace bm {

struct GilHooks {
  // Releases the lock if this thread holds it; returns what restore() needs (null: nothing released).
  void* (*release)() = nullptr;
  void (*restore)(void* state) = nullptr;
};
// Installs (or, with empty hooks, removes) the hooks; safe while other threads run ops.
void set_gil_hooks(GilHooks hooks);
GilHooks gil_hooks();

class WithoutGil {
 public:
  WithoutGil() : hooks_(gil_hooks()) {
    if (hooks_.release) state_ = hooks_.release();
  }
  ~WithoutGil() {
    if (state_) hooks_.restore(state_);
  }
  WithoutGil(const WithoutGil&) = delete;
  WithoutGil& operator=(const WithoutGil&) = delete;

 private:
  GilHooks hooks_;  // the pair that released is the pair that restores
  void* state_ = nullptr;
};

}  // namespace bm
