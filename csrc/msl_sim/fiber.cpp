// Fibers for the simulator's lanes. Each has an mmap'ed stack with a guard page below it, so a
// lane that overflows its stack faults at once instead of corrupting a neighbour's.
// Switching: on x86-64 and arm64 a few lines of assembly save the callee-saved registers and swap
// stack pointers (~10 ns); elsewhere ucontext, whose swapcontext makes a signal-mask syscall on
// every switch (~0.2-0.5 us; a 256-thread group with a few barriers then costs ~1 ms).
// Under AddressSanitizer every switch is announced (__sanitizer_start/finish_switch_fiber) with the
// stack it enters: ASan keeps one stack range per thread, and without the announcement it takes a
// lane's frames for wild pointers, cannot clear the frames an exception unwinds on a lane's stack
// (it warns "ignoring requested __asan_handle_no_return" and later reports overflows that are not
// there), and misplaces its fake stacks. tools/sanitize.sh checks both halves.
#if defined(__APPLE__)
#define _XOPEN_SOURCE 600  // macOS exposes ucontext only in XOPEN mode
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
#endif
#include "msl_sim/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/errors.h"

#if defined(__SANITIZE_ADDRESS__)
#define BM_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BM_FIBER_ASAN 1
#endif
#endif
#if BM_FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

// -DBM_MSL_FIBER_UCONTEXT forces the portable path (to test it on x86-64/arm64).
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(BM_MSL_FIBER_UCONTEXT)
#define BM_FIBER_ASM 1
#else
#include <ucontext.h>
#endif

namespace bm::msl {

namespace {
constexpr size_t kStackBytes = 256 * 1024;  // generous: debug builds keep big frames
}

#if BM_FIBER_ASM
// bm_msl_switch(save, load): pushes the callee-saved registers (and the FP control words on
// x86-64), stores the stack pointer to *save, loads `load` as the stack pointer, pops the other
// fiber's registers and returns into it. bm_msl_fiber_start is where a new fiber first "returns":
// it calls fiber_boot(impl) from registers the initial frame preset, and marks the end of the stack
// for unwinders (lane exceptions are caught in the entry function, above it).
extern "C" void bm_msl_switch(void** save, void* load);
#if defined(__APPLE__)
#define BM_SYM(name) "_" #name
#define BM_FUNC_TYPE(name)
#define BM_TEXT_BEGIN ".text\n"
#define BM_TEXT_END ""
#else
#define BM_SYM(name) #name
#define BM_FUNC_TYPE(name) ".type " #name ", %function\n"
#define BM_TEXT_BEGIN ".pushsection .text\n"
#define BM_TEXT_END ".popsection\n"
#endif

#if defined(__x86_64__)
// Frame, from the saved stack pointer up: mxcsr+x87cw, r15, r14, r13, r12, rbx, rbp, return.
constexpr int kFrameWords = 8;
__asm__(BM_TEXT_BEGIN
        ".globl " BM_SYM(bm_msl_switch) "\n" BM_FUNC_TYPE(bm_msl_switch)
        BM_SYM(bm_msl_switch) ":\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        BM_SYM(bm_msl_fiber_start) ":\n"
        "  .cfi_startproc\n  .cfi_undefined rip\n"
        "  movq %r13, %rdi\n  callq *%r12\n  ud2\n"
        "  .cfi_endproc\n" BM_TEXT_END);
#else
// Frame, from the saved stack pointer up: x19..x30 (x29 fp, x30 return), d8..d15.
constexpr int kFrameWords = 22;
__asm__(BM_TEXT_BEGIN ".p2align 2\n"
        ".globl " BM_SYM(bm_msl_switch) "\n" BM_FUNC_TYPE(bm_msl_switch)
        BM_SYM(bm_msl_switch) ":\n"
        "  sub sp, sp, #176\n"
        "  stp x19, x20, [sp, #0]\n  stp x21, x22, [sp, #16]\n  stp x23, x24, [sp, #32]\n"
        "  stp x25, x26, [sp, #48]\n  stp x27, x28, [sp, #64]\n  stp x29, x30, [sp, #80]\n"
        "  stp d8, d9, [sp, #96]\n  stp d10, d11, [sp, #112]\n  stp d12, d13, [sp, #128]\n"
        "  stp d14, d15, [sp, #144]\n"
        "  mov x2, sp\n  str x2, [x0]\n  mov sp, x1\n"
        "  ldp x19, x20, [sp, #0]\n  ldp x21, x22, [sp, #16]\n  ldp x23, x24, [sp, #32]\n"
        "  ldp x25, x26, [sp, #48]\n  ldp x27, x28, [sp, #64]\n  ldp x29, x30, [sp, #80]\n"
        "  ldp d8, d9, [sp, #96]\n  ldp d10, d11, [sp, #112]\n  ldp d12, d13, [sp, #128]\n"
        "  ldp d14, d15, [sp, #144]\n"
        "  add sp, sp, #176\n  ret\n"
        ".p2align 2\n"
        BM_SYM(bm_msl_fiber_start) ":\n"
        "  .cfi_startproc\n  .cfi_undefined x30\n"
        "  mov x0, x20\n  blr x19\n  brk #0\n"
        "  .cfi_endproc\n" BM_TEXT_END);
#endif
extern "C" void bm_msl_fiber_start();
#endif

struct Fiber::Impl {
  char* mapping = nullptr;  // guard page + stack; null for a fiber that only records a context
  size_t mapped = 0;
  void (*entry)(int) = nullptr;
  int arg = 0;
  // The stack this fiber runs on: its own, or (for a fiber that records the thread's context) the
  // thread's, learned the first time another fiber is entered from it.
  const void* stack_bottom = nullptr;
  size_t stack_size = 0;
  void* fake_stack = nullptr;  // ASan's fake stack while this fiber is switched out
#if BM_FIBER_ASM
  void* sp = nullptr;
#else
  ucontext_t ctx{};
#endif
};

namespace {

#if BM_FIBER_ASAN
thread_local Fiber::Impl* t_switch_from = nullptr;  // the fiber being left, for the one entered

// BM_SANITIZER_NO_FIBER_ANNOTATIONS=1 turns the announcements off: tools/sanitize.sh uses it to
// show that ASan goes wrong without them.
bool annotate() {
  static const bool on = [] {
    const char* v = std::getenv("BM_SANITIZER_NO_FIBER_ANNOTATIONS");
    return !(v && *v && *v != '0');
  }();
  return on;
}

void before_switch(Fiber::Impl& from, Fiber::Impl& to, bool exiting) {
  if (!annotate()) return;
  t_switch_from = &from;
  // A null save slot tells ASan the fiber is left for good, so it frees its fake stack.
  __sanitizer_start_switch_fiber(exiting ? nullptr : &from.fake_stack, to.stack_bottom, to.stack_size);
}

// Runs on the entered stack right after a switch; `fake` is the entered fiber's saved fake stack.
void after_switch(void* fake) {
  if (!annotate()) return;
  const void* bottom = nullptr;
  size_t size = 0;
  __sanitizer_finish_switch_fiber(fake, &bottom, &size);
  Fiber::Impl* from = t_switch_from;
  if (from && !from->mapping) {  // the thread's own stack: remember it for switching back
    from->stack_bottom = bottom;
    from->stack_size = size;
  }
}
#else
inline void before_switch(Fiber::Impl&, Fiber::Impl&, bool) {}
inline void after_switch(void*) {}
#endif

// The first code a new fiber runs.
[[noreturn]] void fiber_boot(Fiber::Impl* f) {
  after_switch(nullptr);
  f->entry(f->arg);
  std::abort();  // entry must switch away for good, never return
}

#if !BM_FIBER_ASM
thread_local Fiber::Impl* t_booting = nullptr;  // makecontext passes only ints portably
void fiber_boot_ucontext() { fiber_boot(t_booting); }
#endif

void unpoison_stack(Fiber::Impl& f) {
#if BM_FIBER_ASAN
  // Frames abandoned on this stack (lanes left mid-kernel when another lane failed) never returned
  // to clear their redzones from ASan's shadow memory; the next lane here must not inherit them.
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  ASAN_UNPOISON_MEMORY_REGION(f.mapping + page, f.mapped - page);
#else
  (void)f;
#endif
}

}  // namespace

Fiber::Fiber() : impl_(new Impl) {}

Fiber::~Fiber() {
  if (impl_->mapping) {
    unpoison_stack(*impl_);
    munmap(impl_->mapping, impl_->mapped);
  }
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
    f.stack_bottom = f.mapping + page;
    f.stack_size = kStackBytes;
  }
  unpoison_stack(f);
  f.entry = entry;
  f.arg = arg;
  f.fake_stack = nullptr;  // a fiber abandoned mid-run left its fake stack behind
#if BM_FIBER_ASM
  uintptr_t top = reinterpret_cast<uintptr_t>(f.mapping + f.mapped) & ~uintptr_t(15);
  uint64_t* frame = reinterpret_cast<uint64_t*>(top) - kFrameWords - 2;  // 16-byte aligned
  std::memset(frame, 0, (kFrameWords + 2) * sizeof(uint64_t));
  uint64_t start = reinterpret_cast<uint64_t>(&bm_msl_fiber_start);
  uint64_t fn = reinterpret_cast<uint64_t>(&fiber_boot), a = reinterpret_cast<uint64_t>(&f);
#if defined(__x86_64__)
  // After `ret` the stack pointer is frame+8 words, 16-aligned as a call site needs.
  uint32_t csr[2] = {0, 0};
  __asm__ volatile("stmxcsr %0\n fnstcw %1" : "=m"(csr[0]), "=m"(csr[1]));
  std::memcpy(&frame[0], csr, 8);
  frame[3] = a;      // r13
  frame[4] = fn;     // r12
  frame[7] = start;  // return address
#else
  frame[0] = fn;      // x19
  frame[1] = a;       // x20
  frame[11] = start;  // x30
#endif
  f.sp = frame;
#else
  if (getcontext(&f.ctx) != 0) throw Error("[msl-sim] getcontext failed");
  f.ctx.uc_stack.ss_sp = f.mapping + page;
  f.ctx.uc_stack.ss_size = kStackBytes;
  f.ctx.uc_link = nullptr;
  makecontext(&f.ctx, &fiber_boot_ucontext, 0);
#endif
}

namespace {
void raw_switch(Fiber::Impl& from, Fiber::Impl& to) {
#if BM_FIBER_ASM
  bm_msl_switch(&from.sp, to.sp);
#else
  t_booting = &to;
  swapcontext(&from.ctx, &to.ctx);
#endif
}
}  // namespace

void Fiber::switch_to(Fiber& from, Fiber& to) {
  before_switch(*from.impl_, *to.impl_, false);
  raw_switch(*from.impl_, *to.impl_);
  after_switch(from.impl_->fake_stack);  // resumed: back on from's stack
}

void Fiber::exit_to(Fiber& from, Fiber& to) {
  before_switch(*from.impl_, *to.impl_, true);
  raw_switch(*from.impl_, *to.impl_);
  std::abort();  // never resumed
}

}  // namespace bm::msl
