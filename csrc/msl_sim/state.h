// State of the dispatch that is running on this host thread, shared by launch.cpp (binding,
// memory, loop execution, messages) and scheduler.cpp (fibers, barriers, simd collectives).
#pragma once
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "msl_sim/launch.h"
#include "msl_sim/race.h"

namespace bm::msl {

struct GroupState {
  Dim3 pos;                  // threadgroup_position_in_grid
  Dim3 size;                 // threads in this group (smaller than dispatched at a grid edge)
  uint32_t nthreads = 0;
  std::deque<Region> regions;  // threadgroup variables and dynamic memory; stable addresses
  std::vector<std::pair<const void*, const Region*>> variables;  // TgSlot -> its region
  const Region* dynamic[kMaxThreadgroupSlots] = {};
  size_t used = 0;           // bytes of the arena handed out
};

struct LaunchState {
  const LaunchSpec* spec = nullptr;
  const KernelInfo* kernel = nullptr;
  Region buffers[kMaxBufferSlots];
  GroupState group;
  std::unique_ptr<char[]> arena_storage;  // threadgroup memory of the running group
  char* arena = nullptr;                  // 64-byte aligned start within arena_storage
  const LaneIds* current = nullptr;       // the lane running now, for messages
  bool fibers = false;                    // lanes run as fibers (collectives allowed)
  std::unique_ptr<RaceDetector> race;     // null when the race detector is off
  Shuffler shuffle;                       // lane orders (in index order unless shuffling is on)
};

// The dispatch running on this thread; throws bm::Error when called outside a kernel.
LaunchState& launch_state();

// "kernel 'name' (file.metal), thread (x,y,z) in threadgroup (x,y,z)"
std::string describe_lane(const LaunchState& L);
std::string describe_kernel(const LaunchState& L);
// "buffer(2)", "threadgroup variable 'scratch'", "threadgroup(0) memory"
std::string region_name(const Region& r);

// scheduler.cpp: runs one threadgroup's lanes as fibers.
void run_group_with_fibers(LaunchState& L, const std::vector<LaneIds>& lanes);

}  // namespace bm::msl
