// Runs one dispatch: validates it, binds buffers, walks the threadgroups, gives each group its
// threadgroup memory, and runs the lanes — as a plain loop when the kernel has no barrier or simd
// call, else through the fiber scheduler. Also the services kernel code calls back into
// (bound_buffer, find_region, threadgroup_variable) and the error messages for faults.
#include <algorithm>
#include <cstring>
#include <string>

#include "core/errors.h"
#include "msl_sim/state.h"

namespace bm::msl {

namespace {

thread_local LaunchState* t_launch = nullptr;

struct CurrentLaunch {
  LaunchState* prev;
  explicit CurrentLaunch(LaunchState* L) : prev(t_launch) { t_launch = L; }
  ~CurrentLaunch() { t_launch = prev; }
};

std::string dim(const Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

uint64_t volume(const Dim3& d) { return uint64_t(d.x) * d.y * d.z; }

// Threadgroup memory is one 32 KiB arena per group; allocations are 16-byte aligned like Metal's.
const Region& allocate(LaunchState& L, size_t size, size_t align, Region proto) {
  GroupState& g = L.group;
  if (align < 16) align = 16;
  size_t start = (g.used + align - 1) / align * align;
  if (start + size > kMaxThreadgroupMemory) {
    throw ValueError("[msl-sim] " + describe_kernel(L) + " uses more than " + std::to_string(kMaxThreadgroupMemory) +
                     " bytes of threadgroup memory (" + std::to_string(start + size) + " needed with " +
                     region_name(proto) + ")");
  }
  g.used = start + size;
  proto.base = L.arena + start;
  proto.length = size;
  // Fresh threadgroup memory is undefined on a GPU: poison it (NaN floats, -1 ints) so a kernel
  // that reads before writing gives visibly wrong results instead of plausible zeros. The race
  // detector reports such reads itself and needs a poison no store is likely to repeat.
  if (L.race) {
    L.race->poison(proto.base, size);
    proto.track = kTrackReadOnly | kTrackWritable;
    proto.log = L.race->log();
  } else {
    std::memset(proto.base, 0xff, size);
  }
  g.regions.push_back(proto);
  return g.regions.back();
}

void start_group(LaunchState& L, const Dim3& pos, const Dim3& size, uint32_t serial) {
  GroupState& g = L.group;
  if (L.race) L.race->start_group(serial);
  g.pos = pos;
  g.size = size;
  g.nthreads = size.x * size.y * size.z;
  g.regions.clear();
  g.variables.clear();
  g.used = 0;
  for (int i = 0; i < kMaxThreadgroupSlots; ++i) {
    g.dynamic[i] = nullptr;
    if (!L.spec->threadgroup_set[i]) continue;
    Region proto;
    proto.space = Region::Threadgroup;
    proto.index = i;
    g.dynamic[i] = &allocate(L, L.spec->threadgroup_memory[i], 16, proto);
  }
}

LaneIds lane_ids(const LaunchSpec& s, const GroupState& g, uint32_t index) {
  LaneIds id;
  id.thread_position_in_threadgroup = {index % g.size.x, (index / g.size.x) % g.size.y, index / (g.size.x * g.size.y)};
  id.threadgroup_position_in_grid = g.pos;
  id.threads_per_threadgroup = g.size;
  id.dispatch_threads_per_threadgroup = s.threads_per_group;
  id.threadgroups_per_grid = s.threadgroups;
  id.threads_per_grid = s.grid;
  const Dim3& t = id.thread_position_in_threadgroup;
  id.thread_position_in_grid = {g.pos.x * s.threads_per_group.x + t.x, g.pos.y * s.threads_per_group.y + t.y,
                                g.pos.z * s.threads_per_group.z + t.z};
  id.thread_index_in_threadgroup = index;
  id.thread_index_in_simdgroup = index % kSimdWidth;
  id.simdgroup_index_in_threadgroup = index / kSimdWidth;
  id.simdgroups_per_threadgroup = (g.nthreads + kSimdWidth - 1) / kSimdWidth;
  id.threads_per_simdgroup = kSimdWidth;
  return id;
}

uint32_t clipped(uint32_t group, uint32_t per_group, uint32_t grid) {
  uint64_t start = uint64_t(group) * per_group;
  return uint32_t(std::min<uint64_t>(per_group, grid - start));
}

}  // namespace

std::string region_name(const Region& r) {
  if (r.space == Region::Threadgroup) {
    if (r.name) return std::string("threadgroup variable '") + r.name + "'";
    return "threadgroup(" + std::to_string(r.index) + ") memory";
  }
  return "buffer(" + std::to_string(r.index) + ")" + (r.space == Region::Constant ? " (set_bytes)" : "");
}

LaunchState& launch_state() {
  if (!t_launch) throw Error("[msl-sim] a kernel-side function was called outside a running kernel");
  return *t_launch;
}

std::string describe_kernel(const LaunchState& L) {
  return std::string("kernel '") + L.kernel->host_name + "' (" + L.kernel->source + ")";
}

std::string describe_lane(const LaunchState& L) {
  std::string s = describe_kernel(L);
  if (L.current) {
    s += ", thread " + dim(L.current->thread_position_in_grid) + " in threadgroup " +
         dim(L.current->threadgroup_position_in_grid);
  }
  return s;
}

void validate_launch(const LaunchSpec& s) {
  const KernelInfo* k = s.kernel;
  if (!k) throw Error("[msl-sim] dispatch without a compute pipeline");
  std::string who = std::string("[msl-sim] kernel '") + k->host_name + "': ";
  const Dim3& t = s.threads_per_group;
  if (volume(t) == 0 || volume(s.threadgroups) == 0 || volume(s.grid) == 0)
    throw ValueError(who + "empty dispatch: threadgroup size " + dim(t) + ", grid " + dim(s.grid));
  uint64_t n = volume(t);
  if (n > kMaxThreadsPerGroup || n > k->max_threads) {
    throw ValueError(who + "a threadgroup of " + std::to_string(t.x) + "x" + std::to_string(t.y) + "x" +
                     std::to_string(t.z) + " = " + std::to_string(n) + " threads exceeds the maximum of " +
                     std::to_string(std::min(kMaxThreadsPerGroup, k->max_threads)));
  }
  size_t dyn = 0;
  for (int i = 0; i < kMaxThreadgroupSlots; ++i)
    if (s.threadgroup_set[i]) dyn += (s.threadgroup_memory[i] + 15) / 16 * 16;
  if (dyn > kMaxThreadgroupMemory)
    throw ValueError(who + std::to_string(dyn) + " bytes of threadgroup memory exceed the maximum of " +
                     std::to_string(kMaxThreadgroupMemory));
}

namespace {

// Runs one lane to its end (kernels without barriers or simd calls); the race detector checks
// its accesses afterwards, also when it faulted (a race is the likelier root cause).
void run_lane(LaunchState& L, const LaneIds& id) {
  L.current = &id;
  if (!L.race) return L.kernel->fn(id);
  try {
    L.kernel->fn(id);
  } catch (...) {
    L.race->end_segment(id);
    throw;
  }
  L.race->end_segment(id);
}

}  // namespace

void run_kernel(const LaunchSpec& spec) {
  validate_launch(spec);
  LaunchState L;
  L.spec = &spec;
  L.kernel = spec.kernel;
  L.fibers = spec.kernel->needs_fibers;
  L.shuffle = Shuffler::for_dispatch();
  if (race_check_enabled()) L.race = std::make_unique<RaceDetector>(L);
  for (int i = 0; i < kMaxBufferSlots; ++i) {
    const BufferArg& b = spec.buffers[i];
    L.buffers[i].index = i;
    L.buffers[i].space = b.constant ? Region::Constant : Region::Device;
    L.buffers[i].base = b.set ? b.data : nullptr;
    L.buffers[i].length = b.set ? b.length : 0;
    // Device writes are checked; constant memory cannot be written.
    L.buffers[i].track = L.race && !b.constant ? kTrackWritable : 0;
    L.buffers[i].log = L.race ? L.race->log() : nullptr;
  }
  // Reads through `const device T*` are tracked only where they can race: in buffers bound
  // overlapping another device buffer (an in-place op whose input and output share memory).
  for (int i = 0; L.race && i < kMaxBufferSlots; ++i) {
    Region& a = L.buffers[i];
    for (int j = i + 1; a.track && j < kMaxBufferSlots; ++j) {
      Region& b = L.buffers[j];
      if (b.track && a.base < b.base + b.length && b.base < a.base + a.length) {
        a.track |= kTrackReadOnly;
        b.track |= kTrackReadOnly;
      }
    }
  }
  L.arena_storage.reset(new char[kMaxThreadgroupMemory + 64]);
  L.arena = L.arena_storage.get() + (64 - reinterpret_cast<uintptr_t>(L.arena_storage.get()) % 64) % 64;
  CurrentLaunch guard(&L);

  const Dim3& G = spec.threadgroups;
  const Dim3& T = spec.threads_per_group;
  // Threadgroups, and the lanes of a plain-loop kernel, run in index order or, shuffled, in a
  // seeded random order (the fiber scheduler shuffles its own rounds).
  std::vector<uint32_t> groups, order;
  const uint64_t ngroups = volume(G);
  if (L.shuffle.on() && ngroups <= 0xffffffffull) L.shuffle.order(groups, uint32_t(ngroups));
  std::vector<LaneIds> lanes;
  for (uint64_t k = 0; k < ngroups; ++k) {
    const uint64_t serial = groups.empty() ? k : groups[k];
    const uint32_t gx = uint32_t(serial % G.x), gy = uint32_t(serial / G.x % G.y), gz = uint32_t(serial / G.x / G.y);
    Dim3 size{clipped(gx, T.x, spec.grid.x), clipped(gy, T.y, spec.grid.y), clipped(gz, T.z, spec.grid.z)};
    start_group(L, Dim3{gx, gy, gz}, size, uint32_t(serial));
    lanes.resize(L.group.nthreads);
    for (uint32_t i = 0; i < L.group.nthreads; ++i) lanes[i] = lane_ids(spec, L.group, i);
    if (L.fibers) {
      run_group_with_fibers(L, lanes);
    } else if (L.shuffle.on()) {
      L.shuffle.order(order, L.group.nthreads);
      for (uint32_t i : order) run_lane(L, lanes[i]);
    } else {
      for (const LaneIds& id : lanes) run_lane(L, id);
    }
    L.current = nullptr;
  }
}

// ---- services for kernel code ----

const Region& bound_buffer(int index) {
  LaunchState& L = launch_state();
  if (index < 0 || index >= kMaxBufferSlots || !L.spec->buffers[index].set)
    throw Error("[msl-sim] " + describe_kernel(L) + ": buffer(" + std::to_string(index) + ") was not set");
  return L.buffers[index];
}

const Region& bound_threadgroup(int index) {
  LaunchState& L = launch_state();
  if (index < 0 || index >= kMaxThreadgroupSlots || !L.group.dynamic[index])
    throw Error("[msl-sim] " + describe_kernel(L) + ": threadgroup(" + std::to_string(index) +
                ") memory length was not set");
  return *L.group.dynamic[index];
}

const Region* find_region(const void* p) {
  if (!t_launch || !p) return nullptr;
  const char* a = static_cast<const char*>(p);
  for (const Region& r : t_launch->buffers)
    if (r.base && a >= r.base && a < r.base + r.length) return &r;
  for (const Region& r : t_launch->group.regions)
    if (a >= r.base && a < r.base + r.length) return &r;
  return nullptr;
}

const Region& threadgroup_variable(const void* slot, size_t size, size_t align, const char* name) {
  LaunchState& L = launch_state();
  for (auto& [s, r] : L.group.variables)
    if (s == slot) return *r;
  Region proto;
  proto.space = Region::Threadgroup;
  proto.name = name;
  const Region& r = allocate(L, size, align, proto);
  L.group.variables.emplace_back(slot, &r);
  return r;
}

void race_note(const Region& r, const void* addr, size_t size, Access kind, const char* file, int line) {
  LaunchState& L = launch_state();
  if (L.race) L.race->note(r, addr, size, kind, file, line);
}

void fail_out_of_bounds(const Region& r, const void* addr, size_t size) {
  const LaunchState& L = launch_state();
  long long off = static_cast<const char*>(addr) - r.base;
  throw IndexError("[msl-sim] " + describe_lane(L) + ": out-of-bounds access to " + region_name(r) + ": " +
                   std::to_string(size) + " bytes at byte offset " + std::to_string(off) + " of a " +
                   std::to_string(r.length) + "-byte region");
}

void fail_null_pointer(size_t size) {
  const LaunchState& L = launch_state();
  throw IndexError("[msl-sim] " + describe_lane(L) + ": access of " + std::to_string(size) +
                   " bytes through a null pointer");
}

}  // namespace bm::msl
