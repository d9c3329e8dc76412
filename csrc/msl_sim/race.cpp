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
// of the 32 KiB arena (16 bytes, the source lines apart, so a float's four cells share one cache
// line). Epochs only grow and each group starts a new one, so a cell from an earlier group or
// barrier interval is stale without being cleared, and "written in this group" is "last written
// at or after the group's first epoch".
struct RaceDetector::TgStore {
  struct Cell {
    uint32_t w_epoch = 0, r_epoch = 0;  // barrier interval of the last write / of the readers
    uint16_t w_lane = kNoLane, r_lane[2] = {kNoLane, kNoLane};
  };
  struct Sites {
    uint32_t w = 0, r[2] = {0, 0};
  };
  std::vector<Cell> cells = std::vector<Cell>(kMaxThreadgroupMemory);
  std::vector<Sites> sites_of = std::vector<Sites>(kMaxThreadgroupMemory);
  // Most accesses are whole aligned 4-byte words: a word's state then lives in the cell of its
  // first byte alone. The first access to part of a word in a group copies that state into the
  // word's other cells and marks the word split (split[w] == group_epoch): byte cells from then on.
  std::vector<uint32_t> split = std::vector<uint32_t>(kMaxThreadgroupMemory / 4);
  uint32_t epoch = 1;        // the barrier interval now
  uint32_t group_epoch = 1;  // the group's first one
  std::vector<Site> sites{Site{nullptr, 0}};
  std::map<std::pair<const char*, int>, uint32_t> site_index;

  void advance(bool new_group) {
    if (epoch > 0xfffffff0u) {
      std::fill(cells.begin(), cells.end(), Cell{});
      std::fill(split.begin(), split.end(), 0u);
      epoch = group_epoch = 1;
    }
    ++epoch;
    if (new_group) group_epoch = epoch;
  }
};

RaceDetector::RaceDetector(LaunchState& L)
    : L_(L), tg_([]() -> TgStore& {
        static thread_local TgStore store;
        return store;
      }()) {
  entries_.resize(1024);
  log_.next = entries_.data();
  log_.end = entries_.data() + entries_.size();
}

RaceDetector::~RaceDetector() {
  for (auto& s : shadows_) std::free(s->cells);
}

void RaceDetector::start_group(uint32_t group_serial) {
  group_serial_ = group_serial;
  poison_state_ = uint64_t(group_serial) * 0x2545f4914f6cdd1dull + 1;
  tg_.advance(true);
  clear_log();
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
  if (log_.next == log_.end) {
    size_t used = size_t(log_.next - entries_.data());
    entries_.resize(entries_.size() * 2);
    log_.next = entries_.data() + used;
    log_.end = entries_.data() + entries_.size();
  }
  if (kind == Access::Atomic) {
    // `atomic_fetch_add((device atomic_int*)&p[i], ...)`: the plain access that made the pointer
    // is part of the atomic operation.
    for (RaceEntry* e = log_.next; e-- > entries_.data() && log_.next - e <= 4;)
      if (e->addr < a + size && a < e->addr + e->size) e->kind = Access::Atomic;
  }
  RaceEntry* e = log_.next++;
  e->region = &r;
  e->addr = a;
  e->file = file;
  e->line = line;
  e->size = uint32_t(size);
  e->kind = kind;
  if (size <= sizeof e->found) {
    std::memcpy(e->found, a, size);
  } else {
    uint32_t at = uint32_t(big_.size());
    std::memcpy(e->found, &at, sizeof at);
    big_.insert(big_.end(), a, a + size);
  }
}

const char* RaceDetector::found_bytes(const RaceEntry& e) const {
  if (e.size <= sizeof e.found) return e.found;
  uint32_t at;
  std::memcpy(&at, e.found, sizeof at);
  return big_.data() + at;
}

uint32_t RaceDetector::site_of(const char* file, int line) {
  SiteSlot& slot = site_cache_[(reinterpret_cast<uintptr_t>(file) / 8 + uint32_t(line) * 31u) % 64];
  if (slot.file == file && slot.line == line) return slot.site;
  auto [it, added] = tg_.site_index.emplace(std::make_pair(file, line), uint32_t(tg_.sites.size()));
  if (added) tg_.sites.push_back(Site{file, line});
  slot = SiteSlot{file, line, it->second};
  return it->second;
}

std::string RaceDetector::site_text(uint32_t site) const {
  const Site& s = tg_.sites[site];
  if (!s.file) return "a line unknown (an access through *p or p->)";
  return std::string(s.file) + ":" + std::to_string(s.line);
}

namespace {
// Whether an access changed its bytes; constant sizes compile to plain loads.
bool changed(const char* now, const char* found, uint32_t size) {
  switch (size) {
    case 4: {
      uint32_t x, y;
      std::memcpy(&x, now, 4);
      std::memcpy(&y, found, 4);
      return x != y;
    }
    case 8: {
      uint64_t x, y;
      std::memcpy(&x, now, 8);
      std::memcpy(&y, found, 8);
      return x != y;
    }
    case 2:
      return now[0] != found[0] || now[1] != found[1];
    case 1:
      return now[0] != found[0];
    default:
      return std::memcmp(now, found, size) != 0;
  }
}
}  // namespace

void RaceDetector::end_segment(const LaneIds& lane) {
  for (RaceEntry* e = entries_.data(); e != log_.next; ++e) {
    bool write = changed(e->addr, found_bytes(*e), e->size);
    if (e->region->space == Region::Threadgroup) threadgroup_access(*e, write, lane);
    else if (e->kind == Access::Plain) device_access(*e, write, lane, site_of(e->file, e->line));
  }
  clear_log();
}

void RaceDetector::fail(const std::string& what, const RaceEntry& e, size_t byte, const std::string& detail) {
  const Region& r = *e.region;
  size_t at = size_t(e.addr - r.base) + byte;
  clear_log();
  throw RaceError("[msl-sim] " + what + " in " + describe_kernel(L_) + " on " + region_name(r) + " (byte " +
                  std::to_string(at) + " of " + std::to_string(r.length) + "): " + detail);
}

void RaceDetector::threadgroup_access(const RaceEntry& e, bool write, const LaneIds& lane) {
  const size_t off = size_t(e.addr - L_.arena);
  // The source line's index in the site table, looked up only when a cell records it.
  uint32_t site_index = 0;
  auto site = [&]() {
    if (!site_index) site_index = site_of(e.file, e.line);
    return site_index;
  };
  const uint16_t me = uint16_t(lane.thread_index_in_threadgroup);
  const uint32_t epoch = tg_.epoch, group_epoch = tg_.group_epoch;
  // Messages are built only on a report: this runs for every access.
  auto race = [&](size_t b, uint16_t other, uint32_t other_site, const char* did_other, const char* did_me) {
    fail("data race", e, b,
         "in threadgroup " + dim(L_.group.pos) + ", lane " + std::to_string(other) + " " + did_other + " it at " +
             site_text(other_site) + " and lane " + std::to_string(me) + " " + did_me + " it at " + site_text(site()) +
             ", with no threadgroup_barrier(mem_flags::mem_threadgroup) between");
  };
  // One cell: byte b of the access (the first byte of a word when the word is not split).
  auto touch = [&](size_t b) {
    TgStore::Cell& c = tg_.cells[off + b];
    TgStore::Sites& at = tg_.sites_of[off + b];
    if (e.kind == Access::Atomic) {  // counts as written (by no lane in particular), never as a race
      if (c.w_epoch < group_epoch) c = TgStore::Cell{group_epoch, 0, kNoLane, {kNoLane, kNoLane}};
      return;
    }
    const bool other_wrote = c.w_epoch == epoch && c.w_lane != me && c.w_lane != kNoLane;
    if (write) {
      if (other_wrote) race(b, c.w_lane, at.w, "wrote", "wrote");
      if (c.r_epoch == epoch) {
        if (c.r_lane[0] != me) race(b, c.r_lane[0], at.r[0], "read", "wrote");
        if (c.r_lane[1] != kNoLane) race(b, c.r_lane[1], at.r[1], "read", "wrote");
      }
      c.w_epoch = epoch;
      c.w_lane = me;
      at.w = site();
    } else {
      if (c.w_epoch < group_epoch) {
        fail("read of uninitialised threadgroup memory", e, b,
             "in threadgroup " + dim(L_.group.pos) + ", lane " + std::to_string(me) + " read it at " +
                 site_text(site()) + ", but no thread of the threadgroup has written it in this dispatch");
      }
      if (other_wrote) race(b, c.w_lane, at.w, "wrote", "read");
      if (c.r_epoch != epoch) {
        c.r_epoch = epoch;
        c.r_lane[0] = me;
        c.r_lane[1] = kNoLane;
        at.r[0] = site();
      } else if (c.r_lane[0] != me && c.r_lane[1] == kNoLane) {
        c.r_lane[1] = me;
        at.r[1] = site();
      }
    }
  };
  size_t b = 0;
  while (b < e.size) {
    const size_t a = off + b;
    const size_t w = a / 4;
    bool whole = a % 4 == 0 && e.size - b >= 4;
    if (tg_.split[w] != group_epoch && !whole) {  // split the word: its cells take its state
      for (size_t k = 1; k < 4; ++k) {
        tg_.cells[4 * w + k] = tg_.cells[4 * w];
        tg_.sites_of[4 * w + k] = tg_.sites_of[4 * w];
      }
      tg_.split[w] = group_epoch;
    }
    if (whole && tg_.split[w] != group_epoch) {
      touch(b);
      b += 4;
    } else {
      touch(b);
      b += 1;
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

void RaceDetector::device_access(const RaceEntry& e, bool write, const LaneIds& lane, uint32_t site) {
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
