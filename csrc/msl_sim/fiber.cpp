// ucontext fibers with mmap'ed stacks and a guard page below each, so a lane that overflows its
// stack faults at once instead of corrupting a neighbour's.
#if defined(__APPLE__)
#define _XOPEN_SOURCE 600  // macOS exposes ucontext only in XOPEN mode
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
#endif
#include "msl_sim/fiber.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <new>

#include "core/errors.h"

namespace bm::msl {

namespace {
constexpr size_t kStackBytes = 256 * 1024;  // generous: debug builds keep big frames
}

struct Fiber::Impl {
  ucontext_t ctx{};
  char* mapping = nullptr;  // guard page + stack; null for a fiber that only records a context
  size_t mapped = 0;
};

Fiber::Fiber() : impl_(new Impl) {}

Fiber::~Fiber() {
  if (impl_->mapping) munmap(impl_->mapping, impl_->mapped);
}

void Fiber::prepare(void (*entry)(int), int arg) {
  Impl& f = *impl_;
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  if (!f.mapping) {
    f.mapped = kStackBytes + page;
    void* m = mmap(nullptr, f.mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw OutOfMemoryError("[msl-sim] cannot map a fiber stack");
    f.mapping = static_cast<char*>(m);
    mprotect(f.mapping, page, PROT_NONE);  // stacks grow down into the guard page
  }
  if (getcontext(&f.ctx) != 0) throw Error("[msl-sim] getcontext failed");
  f.ctx.uc_stack.ss_sp = f.mapping + page;
  f.ctx.uc_stack.ss_size = kStackBytes;
  f.ctx.uc_link = nullptr;
  makecontext(&f.ctx, reinterpret_cast<void (*)()>(entry), 1, arg);
}

void Fiber::switch_to(Fiber& from, Fiber& to) { swapcontext(&from.impl_->ctx, &to.impl_->ctx); }

}  // namespace bm::msl
