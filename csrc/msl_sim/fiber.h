// Minimal fibers for the simulator's lanes: a stack each and a context switch (assembly on x86-64
// and arm64, ucontext elsewhere), announced to AddressSanitizer in sanitizer builds. Kept apart from
// shader code: this is host-only, and shader translation units must not see system headers.
#pragma once
#include <cstddef>
#include <memory>

namespace bm::msl {

class Fiber {
 public:
  Fiber();
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Prepares this fiber to run entry(arg) on its own stack the next time it is switched to.
  // entry must never return: it ends by switching away for good.
  void prepare(void (*entry)(int), int arg);
  // Saves the running context into `from` and resumes `to`.
  static void switch_to(Fiber& from, Fiber& to);
  // Leaves `from` for good (it is never resumed, only prepared again) and resumes `to`. Under
  // AddressSanitizer this also frees `from`'s fake stack.
  static void exit_to(Fiber& from, Fiber& to);

  struct Impl;  // defined in fiber.cpp

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace bm::msl
