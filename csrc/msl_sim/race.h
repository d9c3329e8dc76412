// The simulator's race detector and lane shuffling (see README.md, "Race detector").
//
// Lanes run one at a time, so every access is a whole, ordered event; what a GPU would do in
// parallel is approximated by the rule: two accesses by different lanes to one byte, at least one
// a write, with no ordering between them, are a race. Ordering is:
//   - threadgroup memory: threadgroup_barrier(mem_flags::mem_threadgroup) of the group. Nothing
//     else (simd collectives, simdgroup_barrier, a barrier without mem_threadgroup): Apple GPUs run
//     a simdgroup in lockstep, but MSL does not promise that threadgroup memory written by one lane
//     is visible to another through a simd call, and the CUDA target (warps) does not either;
//   - device memory: two threads of different threadgroups are never ordered within a dispatch;
//     threads of one group are ordered by threadgroup_barrier(mem_flags::mem_device).
// Atomic accesses are never races. Also reported: a read of threadgroup memory that no lane of
// the group has written in this dispatch.
//
// How an access is seen: checked pointers (stdlib/pointer.h) record each access to a tracked region
// with the bytes it found and its source line. When the lane yields (at a barrier, a simd call, or
// its end) the detector compares those bytes with memory: an access whose bytes changed was a
// write, else a read. So a store of the value already there counts as a read (it cannot change a
// result), and fresh threadgroup memory is filled with pseudo-random bytes rather than a fixed
// poison, so that storing -1 into it is still seen as a write. Tracked: all threadgroup accesses
// through pointers and arrays; device accesses through `device T*`, and through `const device T*`
// where the buffer is bound overlapping another (an in-place op on overlapping views): elsewhere
// const reads cannot race. Not tracked: threadgroup scalars (`threadgroup T x;`, a plain
// reference), `device T&` parameters.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "msl_sim/abi.h"

namespace bm::msl {

struct LaunchState;

// ---- settings: BESSEMER_SIM_RACECHECK=0 turns the detector off (default on),
// BESSEMER_SIM_SHUFFLE=<seed> turns shuffling on; the setters override the environment. ----
bool race_check_enabled();
void set_race_check(bool on);
// True and the seed when shuffling is on. set_shuffle also restarts the sequence of per-dispatch
// orders, so the same seed gives the same orders from there on.
bool shuffle_enabled(uint64_t* seed);
void set_shuffle(bool on, uint64_t seed);

// Seeded lane orders for shuffle mode: one generator per dispatch, derived from the seed and the
// dispatch's number since the seed was set.
class Shuffler {
 public:
  static Shuffler for_dispatch();  // off unless shuffling is on
  bool on() const { return on_; }
  // A random permutation of 0..n-1 when on, else the identity.
  void order(std::vector<uint32_t>& out, uint32_t n);

 private:
  uint64_t next();
  bool on_ = false;
  uint64_t state_ = 0;
};

class RaceDetector {
 public:
  explicit RaceDetector(LaunchState& L);
  ~RaceDetector();
  RaceDetector(const RaceDetector&) = delete;
  RaceDetector& operator=(const RaceDetector&) = delete;

  // A new threadgroup: its memory is fresh, no lane has touched anything yet.
  void start_group(uint32_t group_serial);
  // Fills fresh threadgroup memory (deterministic pseudo-random bytes, high bit set).
  void poison(char* p, size_t n);
  // Where checked pointers append the running lane's accesses (set in each tracked Region).
  RaceLog* log() { return &log_; }
  // An access the pointers could not append themselves (race_note in abi.h).
  void note(const Region& r, const void* addr, size_t size, Access kind, const char* file, int line);
  // The running lane yielded: classify its accesses and check them; throws bm::RaceError.
  void end_segment(const LaneIds& lane);
  // The group's barrier opened; `flags` are the barrier's metal::mem_flags.
  void barrier(uint32_t flags);

 private:
  struct Site {
    const char* file;
    int line;
  };
  // A device access that may take part in a race: who, where, and its place in the group's order.
  struct Record {
    Dim3 thread, group;
    uint32_t group_serial, epoch;
    uint32_t site;
  };
  struct DevCell {
    uint32_t w = 0, r = 0;  // 1 + index of the last writer's / reader's Record, 0 if none
  };
  struct DevShadow {
    const char* lo = nullptr;
    size_t len = 0;
    DevCell* cells = nullptr;  // calloc'd: pages nobody touches stay unmapped
  };
  struct TgStore;

  void device_access(const RaceEntry& e, bool write, const LaneIds& lane, uint32_t site);
  void threadgroup_access(const RaceEntry& e, bool write, const LaneIds& lane);
  DevShadow& shadow_for(const Region& r);
  uint32_t site_of(const char* file, int line);
  std::string site_text(uint32_t site) const;
  [[noreturn]] void fail(const std::string& what, const RaceEntry& e, size_t byte, const std::string& detail);

  LaunchState& L_;
  TgStore& tg_;  // per host thread, reused by every dispatch (epochs make old state stale)
  RaceLog log_;
  std::vector<RaceEntry> entries_;  // log_ points into it
  std::vector<char> big_;           // the bytes found by accesses over 16 bytes
  const char* found_bytes(const RaceEntry& e) const;
  void clear_log() {
    log_.next = entries_.data();
    big_.clear();
  }
  std::vector<Record> records_;
  std::vector<std::unique_ptr<DevShadow>> shadows_;
  DevShadow* by_slot_[kMaxBufferSlots] = {};
  uint32_t group_serial_ = 0;
  uint32_t dev_epoch_ = 0;  // advanced by barriers with mem_device, over the whole dispatch
  uint64_t poison_state_ = 0;
  // A small direct-mapped cache in front of the site table.
  struct SiteSlot {
    const char* file = nullptr;
    int line = -1;
    uint32_t site = 0;
  };
  SiteSlot site_cache_[64];
};

}  // namespace bm::msl
