// The race detector: the accesses of a lane's run are classified when it yields, then checked
// against shadow state — per byte of threadgroup memory (the last writer and two readers of the
// current barrier interval, and whether the group wrote it at all) and per byte of each device
// buffer written in the dispatch (its last writer and reader). See race.h for the rules.
#include "msl_sim/race.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "core/errors.h"
#include "msl_sim/state.h"

namespace bm::msl {

namespace {

constexpr uint16_t kNoLane = 0xffff;

std::string dim(const Dim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}
bool same(const Dim3& a, const Dim3& b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

// Threadgroup shadow state, one per host thread, reused by every dispatch on it: a cell per byte
// of the 32 KiB arena. Counters only grow, so a cell from an earlier group or barrier interval is
// stale without being cleared.
struct RaceDetector::TgStore {
  struct Cell {
    uint32_t written = 0;  // the group stamp when last written
    uint32_t w_epoch = 0, r_epoch = 0;
    uint16_t w_lane = kNoLane, r_lane[2] = {kNoLane, kNoLane};
    uint32_t w_site = 0, r_site[2] = {0, 0};
  };
  std::vector<Cell> cells = std::vector<Cell>(kMaxThreadgroupMemory);
  uint32_t epoch = 1;  // barrier interval; advanced by each barrier and each new group
  uint32_t stamp = 1;  // threadgroup; advanced by each new group
  std::vector<Site> sites{Site{nullptr, 0}};
  std::map<std::pair<const char*, int>, uint32_t> site_index;

  void advance(bool new_group) {
    if (epoch > 0xfffffff0u || stamp > 0xfffffff0u) {
      std::fill(cells.begin(), cells.end(), Cell{});
      epoch = stamp = 1;
    }
    ++epoch;
    if (new_group) ++stamp;
  }
};

RaceDetector::RaceDetector(LaunchState& L)
    : L_(L), tg_([]() -> TgStore& {
        static thread_local TgStore store;
        return store;
      }()) {}

RaceDetector::~RaceDetector() {
  for (auto& s : shadows_) std::free(s->cells);
}

void RaceDetector::start_group(uint32_t group_serial) {
  group_serial_ = group_serial;
  poison_state_ = uint64_t(group_serial) * 0x2545f4914f6cdd1dull + 1;
  tg_.advance(true);
  log_.clear();
  old_.clear();
}

void RaceDetector::poison(char* p, size_t n) {
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = splitmix(poison_state_) | 0x8080808080808080ull;
    std::memcpy(p + i, &v, std::min<size_t>(8, n - i));
  }
}

void RaceDetector::barrier(uint32_t flags) {
  if (flags & kMemThreadgroup) tg_.advance(false);
  if (flags & kMemDevice) ++dev_epoch_;
}

void RaceDetector::note(const Region& r, const void* addr, size_t size, Access kind, const char* file, int line) {
  const char* a = static_cast<const char*>(addr);
  if (kind == Access::Atomic) {
    // `atomic_fetch_add((device atomic_int*)&p[i], ...)`: the plain access that made the pointer
    // is part of the atomic operation.
    for (size_t k = log_.size(), n = 0; k-- > 0 && n < 4; ++n) {
      Entry& e = log_[k];
      if (e.addr < a + size && a < e.addr + e.size) e.kind = Access::Atomic;
    }
  }
  log_.push_back(Entry{&r, a, uint32_t(size), uint32_t(old_.size()), kind, file, line});
  old_.insert(old_.end(), a, a + size);
}

uint32_t RaceDetector::site_of(const char* file, int line) {
  if (file == last_file_ && line == last_line_) return last_site_;
  auto [it, added] = tg_.site_index.emplace(std::make_pair(file, line), uint32_t(tg_.sites.size()));
  if (added) tg_.sites.push_back(Site{file, line});
  last_file_ = file;
  last_line_ = line;
  return last_site_ = it->second;
}

std::string RaceDetector::site_text(uint32_t site) const {
  const Site& s = tg_.sites[site];
  if (!s.file) return "a line unknown (an access through *p or p->)";
  return std::string(s.file) + ":" + std::to_string(s.line);
}

void RaceDetector::end_segment(const LaneIds& lane) {
  if (log_.empty()) return;
  for (const Entry& e : log_) {
    bool write = std::memcmp(e.addr, old_.data() + e.old, e.size) != 0;
    uint32_t site = site_of(e.file, e.line);
    if (e.region->space == Region::Threadgroup) threadgroup_access(e, write, lane, site);
    else if (e.kind == Access::Plain) device_access(e, write, lane, site);
  }
  log_.clear();
  old_.clear();
}

void RaceDetector::fail(const std::string& what, const Entry& e, size_t byte, const std::string& detail) {
  const Region& r = *e.region;
  size_t at = size_t(e.addr - r.base) + byte;
  log_.clear();
  old_.clear();
  throw RaceError("[msl-sim] " + what + " in " + describe_kernel(L_) + " on " + region_name(r) + " (byte " +
                  std::to_string(at) + " of " + std::to_string(r.length) + "): " + detail);
}

void RaceDetector::threadgroup_access(const Entry& e, bool write, const LaneIds& lane, uint32_t site) {
  const size_t off = size_t(e.addr - L_.arena);
  const uint16_t me = uint16_t(lane.thread_index_in_threadgroup);
  const uint32_t epoch = tg_.epoch, stamp = tg_.stamp;
  const std::string group = "threadgroup " + dim(L_.group.pos);
  auto name = [](uint16_t l) { return "lane " + std::to_string(l); };
  const std::string unordered = ", with no threadgroup_barrier(mem_flags::mem_threadgroup) between";
  for (size_t b = 0; b < e.size; ++b) {
    TgStore::Cell& c = tg_.cells[off + b];
    if (e.kind == Access::Atomic) {
      c.written = stamp;
      continue;
    }
    if (write) {
      if (c.w_epoch == epoch && c.w_lane != me) {
        fail("data race", e, b, "in " + group + ", " + name(c.w_lane) + " wrote it at " + site_text(c.w_site) +
                                    " and " + name(me) + " wrote it at " + site_text(site) + unordered);
      }
      if (c.r_epoch == epoch) {
        int other = c.r_lane[0] != me ? 0 : c.r_lane[1] != kNoLane ? 1 : -1;
        if (other >= 0) {
          fail("data race", e, b, "in " + group + ", " + name(c.r_lane[other]) + " read it at " +
                                      site_text(c.r_site[other]) + " and " + name(me) + " wrote it at " +
                                      site_text(site) + unordered);
        }
      }
      c.w_epoch = epoch;
      c.w_lane = me;
      c.w_site = site;
      c.written = stamp;
    } else {
      if (c.written != stamp) {
        fail("read of uninitialised threadgroup memory", e, b,
             "in " + group + ", " + name(me) + " read it at " + site_text(site) +
                 ", but no thread of the threadgroup has written it in this dispatch");
      }
      if (c.w_epoch == epoch && c.w_lane != me) {
        fail("data race", e, b, "in " + group + ", " + name(c.w_lane) + " wrote it at " + site_text(c.w_site) +
                                    " and " + name(me) + " read it at " + site_text(site) + unordered);
      }
      if (c.r_epoch != epoch) {
        c.r_epoch = epoch;
        c.r_lane[0] = me;
        c.r_site[0] = site;
        c.r_lane[1] = kNoLane;
      } else if (c.r_lane[0] != me && c.r_lane[1] == kNoLane) {
        c.r_lane[1] = me;
        c.r_site[1] = site;
      }
    }
  }
}

// Device buffers get a shadow on their first tracked access. Slots bound to overlapping memory
// (one buffer at two offsets) share one shadow, so the threads writing through either collide.
RaceDetector::DevShadow& RaceDetector::shadow_for(const Region& r) {
  if (DevShadow* s = by_slot_[r.index]) return *s;
  const char* lo = r.base;
  const char* hi = r.base + r.length;
  std::vector<DevShadow*> overlapping;
  for (auto& s : shadows_) {
    if (s->cells && s->lo < hi && lo < s->lo + s->len) {
      lo = std::min(lo, s->lo);
      hi = std::max(hi, s->lo + s->len);
      overlapping.push_back(s.get());
    }
  }
  DevShadow* target = nullptr;
  if (overlapping.size() == 1 && overlapping[0]->lo == lo && overlapping[0]->len == size_t(hi - lo)) {
    target = overlapping[0];
  } else {
    auto s = std::make_unique<DevShadow>();
    s->lo = lo;
    s->len = size_t(hi - lo);
    s->cells = static_cast<DevCell*>(std::calloc(std::max<size_t>(s->len, 1), sizeof(DevCell)));
    if (!s->cells) throw OutOfMemoryError("[msl-sim] race detector: no memory for a shadow of " + std::to_string(s->len) + " bytes");
    for (DevShadow* o : overlapping) {
      std::memcpy(s->cells + (o->lo - lo), o->cells, o->len * sizeof(DevCell));
      std::free(o->cells);
      o->cells = nullptr;
      for (auto& slot : by_slot_)
        if (slot == o) slot = s.get();
    }
    target = s.get();
    shadows_.push_back(std::move(s));
  }
  by_slot_[r.index] = target;
  return *target;
}

void RaceDetector::device_access(const Entry& e, bool write, const LaneIds& lane, uint32_t site) {
  DevShadow& sh = shadow_for(*e.region);
  const Record self{lane.thread_position_in_grid, lane.threadgroup_position_in_grid, group_serial_, dev_epoch_, site};
  auto unordered = [&](uint32_t cell) {
    if (!cell) return false;
    const Record& o = records_[cell - 1];
    if (same(o.thread, self.thread)) return false;
    return !(o.group_serial == group_serial_ && o.epoch < dev_epoch_);
  };
  auto race = [&](size_t b, uint32_t cell, const char* did_o, const char* did_me) {
    const Record& o = records_[cell - 1];
    auto who = [](const Record& x) { return "thread " + dim(x.thread) + " of threadgroup " + dim(x.group); };
    std::string why = o.group_serial == group_serial_
                          ? ", with no threadgroup_barrier(mem_flags::mem_device) between"
                          : " (different threadgroups are never ordered within a dispatch)";
    if (did_o[0] == 'w' && did_me[0] == 'w') why += "; threads may update one address only with atomics";
    fail("data race", e, b,
         who(o) + " " + did_o + " it at " + site_text(o.site) + " and " + who(self) + " " + did_me + " it at " +
             site_text(site) + why);
  };
  // One Record per access, shared with the lane's previous access from the same line.
  if (records_.empty() || !same(records_.back().thread, self.thread) || records_.back().site != site ||
      records_.back().epoch != dev_epoch_ || records_.back().group_serial != group_serial_) {
    records_.push_back(self);
  }
  const uint32_t rec = uint32_t(records_.size());
  const size_t base = size_t(e.addr - sh.lo);
  for (size_t b = 0; b < e.size; ++b) {
    DevCell& c = sh.cells[base + b];
    if (unordered(c.w)) race(b, c.w, "wrote", write ? "wrote" : "read");
    if (write) {
      if (unordered(c.r)) race(b, c.r, "read", "wrote");
      c.w = rec;
    } else {
      c.r = rec;
    }
  }
}

// ---- settings and shuffling ----

namespace {

int env_flag(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  std::string s(v);
  return !(s == "0" || s == "off" || s == "false" || s == "no");
}

struct Settings {
  std::atomic<int> race{-1};  // -1: not read from the environment yet
  std::atomic<int> shuffle{-1};
  std::atomic<uint64_t> seed{0};
  std::atomic<uint64_t> dispatches{0};
};

Settings& settings() {
  static Settings s;
  return s;
}

}  // namespace

bool race_check_enabled() {
  Settings& s = settings();
  int v = s.race.load();
  if (v < 0) {
    v = env_flag("BESSEMER_SIM_RACECHECK", 1);
    s.race.store(v);
  }
  return v != 0;
}

void set_race_check(bool on) { settings().race.store(on ? 1 : 0); }

bool shuffle_enabled(uint64_t* seed) {
  Settings& s = settings();
  int v = s.shuffle.load();
  if (v < 0) {
    const char* e = std::getenv("BESSEMER_SIM_SHUFFLE");
    v = 0;
    if (e && *e) {
      char* end = nullptr;
      unsigned long long n = std::strtoull(e, &end, 0);
      if (end && *end == '\0') {
        s.seed.store(n);
        v = 1;
      }
    }
    s.shuffle.store(v);
  }
  if (seed) *seed = s.seed.load();
  return v != 0;
}

void set_shuffle(bool on, uint64_t seed) {
  Settings& s = settings();
  s.seed.store(seed);
  s.dispatches.store(0);
  s.shuffle.store(on ? 1 : 0);
}

Shuffler Shuffler::for_dispatch() {
  Shuffler sh;
  uint64_t seed = 0;
  if (!shuffle_enabled(&seed)) return sh;
  sh.on_ = true;
  sh.state_ = seed ^ (settings().dispatches.fetch_add(1) * 0xd1b54a32d192ed03ull);
  return sh;
}

uint64_t Shuffler::next() { return splitmix(state_); }

void Shuffler::order(std::vector<uint32_t>& out, uint32_t n) {
  out.resize(n);
  for (uint32_t i = 0; i < n; ++i) out[i] = i;
  if (!on_) return;
  for (uint32_t i = n; i > 1; --i) std::swap(out[i - 1], out[next() % i]);
}

}  // namespace bm::msl
