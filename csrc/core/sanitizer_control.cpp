// See sanitizer_control.h. Values go through volatile so the compiler cannot prove the fault away.
#include "core/sanitizer_control.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/errors.h"
#include "msl_sim/fiber.h"

namespace bm {

namespace {

volatile int g_index = 8;       // one past the 8-element arrays below
volatile int g_int_max = std::numeric_limits<int>::max();
void* volatile g_sink = nullptr;

// Pointers through volatile too: UBSan's object-size check must not catch the access before ASan.
int heap_overflow() {
  int* volatile p = new int[8];
  int v = p[g_index];  // heap-buffer-overflow
  delete[] p;
  return v;
}

int use_after_free() {
  int* volatile p = new int[8];
  p[0] = 1;
  delete[] p;
  return p[g_index - 8];  // heap-use-after-free
}

int leak() {
  g_sink = std::malloc(4096);  // the only pointer is dropped: a leak at exit
  g_sink = nullptr;
  return 0;
}

int signed_overflow() {
  int a = g_int_max;
  return a + g_index;  // signed integer overflow
}

// A stack array overflowed on a fiber's stack: ASan sees it only if it knows the fiber's stack.
int g_fiber_result = 0;
msl::Fiber* g_main = nullptr;
msl::Fiber* g_lane = nullptr;

void fiber_entry(int) {
  int local[8];
  std::memset(local, 0, sizeof local);
  int* volatile p = local;  // through a pointer: UBSan's bounds check must not catch it first
  g_fiber_result = p[g_index];  // stack-buffer-overflow
  msl::Fiber::exit_to(*g_lane, *g_main);
}

int fiber_stack() {
  msl::Fiber main, lane;
  g_main = &main;
  g_lane = &lane;
  lane.prepare(&fiber_entry, 0);
  msl::Fiber::switch_to(main, lane);
  return g_fiber_result;
}

}  // namespace

int sanitizer_control(const std::string& kind) {
  if (kind == "heap-overflow") return heap_overflow();
  if (kind == "use-after-free") return use_after_free();
  if (kind == "leak") return leak();
  if (kind == "signed-overflow") return signed_overflow();
  if (kind == "fiber-stack") return fiber_stack();
  throw ValueError("[sanitizer_control] unknown kind '" + kind + "'");
}

}  // namespace bm
