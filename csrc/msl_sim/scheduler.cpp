// Runs one threadgroup's lanes as fibers so threadgroup_barrier and simd functions behave as on a
// GPU. Lanes run in index order, each until it blocks (at a barrier or a simd function) or
// returns. A simdgroup's collective completes when all its active lanes wait at the same call;
// the barrier opens when every lane of the group waits at the same barrier. Anything else that
// leaves no lane runnable is a kernel bug and is reported as such (never a hang or a crash).
// An exception thrown in a lane (an out-of-bounds access...) is caught on the lane's own stack,
// carried out as an exception_ptr, and rethrown here after the group is abandoned.
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "core/errors.h"
#include "msl_sim/fiber.h"
#include "msl_sim/state.h"

namespace bm::msl {

namespace {

struct Lane {
  enum State : uint8_t { Ready, AtBarrier, AtSimd, Done };
  Fiber fiber;
  State state = Ready;
  const LaneIds* ids = nullptr;
  std::exception_ptr error;
  // What the lane waits at.
  const char* what = nullptr;
  SimdCombine combine = nullptr;
  const void* in = nullptr;
  void* out = nullptr;
  uint32_t arg = 0;
  uint32_t flags = 0;  // the barrier's mem_flags
  const char* file = "";
  int line = 0;
};

struct Scheduler {
  LaunchState* L = nullptr;
  Fiber main;
  std::vector<std::unique_ptr<Lane>> lanes;  // reused by every group on this thread
  std::vector<uint32_t> order;                // the order of this round (shuffle mode)
  uint32_t n = 0;
  uint32_t current = 0;
};

thread_local Scheduler* t_sched = nullptr;

Scheduler& scheduler() {
  static thread_local Scheduler s;
  return s;
}

void lane_main(int index) {
  Scheduler& s = *t_sched;
  Lane& lane = *s.lanes[size_t(index)];
  try {
    s.L->kernel->fn(*lane.ids);
  } catch (...) {
    lane.error = std::current_exception();
  }
  lane.state = Lane::Done;
  Fiber::exit_to(lane.fiber, s.main);  // never resumed
}

std::string site(const char* file, int line) { return std::string(file) + ":" + std::to_string(line); }
bool same_site(const Lane& a, const Lane& b) { return a.line == b.line && std::strcmp(a.file, b.file) == 0; }

std::string lane_name(const Lane& l) {
  const Dim3& p = l.ids->thread_position_in_grid;
  return "thread (" + std::to_string(p.x) + "," + std::to_string(p.y) + "," + std::to_string(p.z) + ")";
}

std::string group_name(const Scheduler& s) {
  const Dim3& p = s.L->group.pos;
  return "threadgroup (" + std::to_string(p.x) + "," + std::to_string(p.y) + "," + std::to_string(p.z) + ")";
}

[[noreturn]] void fail(Scheduler& s, const std::string& msg) {
  throw Error("[msl-sim] " + describe_kernel(*s.L) + ": " + msg);
}

// Completes simdgroup `sg`'s collective if all of its active lanes are waiting at it.
void try_simd(Scheduler& s, uint32_t sg) {
  uint32_t first = sg * kSimdWidth, last = std::min(s.n, first + kSimdWidth);
  const Lane* lead = nullptr;
  for (uint32_t i = first; i < last; ++i) {
    const Lane& l = *s.lanes[i];
    if (l.state == Lane::Done) continue;
    if (l.state != Lane::AtSimd) return;  // someone still running or at a barrier
    if (!lead) lead = &l;
    else if (l.combine != lead->combine || !same_site(l, *lead)) {
      fail(s, "the threads of simdgroup " + std::to_string(sg) + " diverged: " + lane_name(*lead) + " calls " +
                  lead->what + " at " + site(lead->file, lead->line) + " while " + lane_name(l) + " calls " +
                  l.what + " at " + site(l.file, l.line) +
                  "; every active thread of a simdgroup must make the same simd call");
    }
  }
  if (!lead) return;
  SimdLane io[kSimdWidth];
  for (uint32_t i = first; i < last; ++i) {
    const Lane& l = *s.lanes[i];
    if (l.state == Lane::AtSimd) io[i - first] = SimdLane{l.in, l.out, l.arg};
  }
  lead->combine(io);
  for (uint32_t i = first; i < last; ++i)
    if (s.lanes[i]->state == Lane::AtSimd) s.lanes[i]->state = Lane::Ready;
}

// No lane can run: open the barrier if the whole group is there, else report what is wrong.
void resolve_stall(Scheduler& s) {
  const Lane* barrier = nullptr;
  const Lane* simd = nullptr;
  uint32_t at_barrier = 0, done = 0;
  for (uint32_t i = 0; i < s.n; ++i) {
    const Lane& l = *s.lanes[i];
    if (l.state == Lane::Done) ++done;
    if (l.state == Lane::AtSimd && !simd) simd = &l;
    if (l.state != Lane::AtBarrier) continue;
    ++at_barrier;
    if (!barrier) barrier = &l;
    else if (!same_site(l, *barrier)) {
      fail(s, "threads of " + group_name(s) + " wait at different barriers: " + lane_name(*barrier) + " at " +
                  site(barrier->file, barrier->line) + ", " + lane_name(l) + " at " + site(l.file, l.line));
    }
  }
  if (simd) {
    std::string other = barrier ? " while other threads of its simdgroup wait at threadgroup_barrier at " +
                                      site(barrier->file, barrier->line)
                                : "";
    fail(s, lane_name(*simd) + " waits at " + simd->what + " at " + site(simd->file, simd->line) + other +
                "; every active thread of a simdgroup must make the same simd call");
  }
  if (done > 0) {
    fail(s, "threadgroup_barrier at " + site(barrier->file, barrier->line) + " was reached by only " +
                std::to_string(at_barrier) + " of the " + std::to_string(s.n) + " threads of " + group_name(s) +
                "; the other " + std::to_string(done) +
                " returned without reaching it");
  }
  if (s.L->race && barrier) s.L->race->barrier(barrier->flags);
  for (uint32_t i = 0; i < s.n; ++i)
    if (s.lanes[i]->state == Lane::AtBarrier) s.lanes[i]->state = Lane::Ready;
}

bool any_ready(const Scheduler& s) {
  for (uint32_t i = 0; i < s.n; ++i)
    if (s.lanes[i]->state == Lane::Ready) return true;
  return false;
}

// Called on a lane's stack: park it with what it waits for, and return when released.
Lane& block(Lane::State st, const char* what, const char* file, int line) {
  Scheduler* s = t_sched;
  LaunchState& L = launch_state();
  if (!s || !L.fibers) {
    throw Error("[msl-sim] " + describe_lane(L) + " calls " + what + " at " + site(file, line) +
                ", but the pre-pass found no barrier or simd call in this kernel and runs its threads one "
                "after another; make the call visible in the kernel's source file or its included headers");
  }
  Lane& lane = *s->lanes[s->current];
  lane.state = st;
  lane.what = what;
  lane.file = file;
  lane.line = line;
  return lane;
}

}  // namespace

void run_group_with_fibers(LaunchState& L, const std::vector<LaneIds>& ids) {
  Scheduler& s = scheduler();
  s.L = &L;
  s.n = uint32_t(ids.size());
  while (s.lanes.size() < s.n) s.lanes.push_back(std::make_unique<Lane>());
  for (uint32_t i = 0; i < s.n; ++i) {
    Lane& l = *s.lanes[i];
    l.state = Lane::Ready;
    l.ids = &ids[i];
    l.error = nullptr;
    l.fiber.prepare(&lane_main, int(i));
  }
  Scheduler* prev = t_sched;
  t_sched = &s;
  struct Restore {
    Scheduler* prev;
    ~Restore() { t_sched = prev; }
  } restore{prev};

  uint32_t done = 0;
  while (done < s.n) {
    // Each round runs every ready lane until it blocks: in index order, or shuffled per round.
    L.shuffle.order(s.order, s.n);
    for (uint32_t i : s.order) {
      Lane& l = *s.lanes[i];
      if (l.state != Lane::Ready) continue;
      s.current = i;
      L.current = l.ids;
      Fiber::switch_to(s.main, l.fiber);
      // A race found in what the lane just did is reported before its own fault, if it had one
      // (reading another lane's unfinished data is the likelier root cause).
      if (L.race) L.race->end_segment(*l.ids);
      if (l.error) std::rethrow_exception(l.error);  // the other lanes are abandoned mid-kernel
      if (l.state == Lane::Done) ++done;
      else if (l.state == Lane::AtSimd) try_simd(s, i / kSimdWidth);
    }
    // A lane returning can complete its simdgroup's collective for the lanes still waiting.
    for (uint32_t sg = 0; sg * kSimdWidth < s.n; ++sg) try_simd(s, sg);
    if (done < s.n && !any_ready(s)) resolve_stall(s);
  }
}

void threadgroup_barrier_wait(uint32_t flags, const char* file, int line) {
  Lane& lane = block(Lane::AtBarrier, "threadgroup_barrier", file, line);
  lane.flags = flags;
  Fiber::switch_to(lane.fiber, t_sched->main);
}

void simd_collective(const char* what, SimdCombine combine, const void* in, void* out, uint32_t arg,
                     const char* file, int line) {
  Lane& lane = block(Lane::AtSimd, what, file, line);
  lane.combine = combine;
  lane.in = in;
  lane.out = out;
  lane.arg = arg;
  Fiber::switch_to(lane.fiber, t_sched->main);
}

}  // namespace bm::msl
