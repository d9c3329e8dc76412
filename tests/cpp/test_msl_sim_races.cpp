// The simulator's race detector and shuffle mode, on the control kernels of
// csrc/msl_sim/controls/race_controls.metal: each bug is reported with the kernel, the memory, both
// threads and their source lines; each fixed twin runs clean; shuffling changes the result of a
// kernel that depends on lane order and no other.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "core/errors.h"
#include "msl_sim/race.h"
#include "sim_helpers.h"

using namespace bm;
using test::Sim;
using test::size3;

namespace {

const char* kFile = "csrc/msl_sim/controls/race_controls.metal";

std::string at(int line) { return std::string(kFile) + ":" + std::to_string(line); }
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Runs control `name` on `threads` threads in groups of `group`, with `nbuffers` zeroed buffers
// of `threads` uints. Returns the race report ("" if none) and buffer(0).
struct Run {
  std::string error;
  std::vector<uint32_t> out, second;
};
Run run(const std::string& name, uint32_t threads, uint32_t group, int nbuffers = 1) {
  Sim s;
  std::vector<std::shared_ptr<metal::Buffer>> bufs;
  auto& e = s.encode("msl_sim_control_" + name);
  for (int i = 0; i < nbuffers; ++i) {
    bufs.push_back(s.zeros(threads * 4));
    e.set_buffer(bufs.back(), 0, uint32_t(i));
  }
  e.dispatch_threads(size3(threads), size3(group));
  Run r;
  try {
    s.run();
  } catch (const RaceError& err) {
    r.error = err.what();
  }
  r.out = Sim::read<uint32_t>(bufs[0]);
  if (nbuffers > 1) r.second = Sim::read<uint32_t>(bufs[1]);
  return r;
}

std::vector<uint32_t> iota(uint32_t n) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), 0u);
  return v;
}

// Restores the detector and shuffle settings a test changes.
struct Settings {
  bool race = msl::race_check_enabled();
  uint64_t seed = 0;
  bool shuffle = msl::shuffle_enabled(&seed);
  Settings() {
    msl::set_race_check(true);
    msl::set_shuffle(false, 0);
  }
  ~Settings() {
    msl::set_race_check(race);
    msl::set_shuffle(shuffle, seed);
  }
};

}  // namespace

TEST_CASE("race detector: a missing threadgroup barrier") {
  Settings keep;
  Run r = run("missing_barrier", 64, 64);
  INFO(r.error);
  CHECK(has(r.error, "[msl-sim] data race in kernel 'msl_sim_control_missing_barrier'"));
  CHECK(has(r.error, "on threadgroup variable 'partial' (byte 4 of 1024)"));
  // Lane 0 stores the value already there (1 + 0), which is no write; lane 1's store is.
  CHECK(has(r.error, "lane 1 wrote it at " + at(17) + " and lane 2 read it at " + at(16)));
  CHECK(has(r.error, "with no threadgroup_barrier(mem_flags::mem_threadgroup) between"));
  Run fixed = run("missing_barrier_fixed", 64, 64);
  CHECK(fixed.error == "");
  for (uint32_t i = 0; i < 64; ++i) CHECK(fixed.out[i] == (i > 0 ? 2 * i + 1 : 1));
  // Off, the detector reports nothing (and the buggy kernel happens to give the in-order result).
  msl::set_race_check(false);
  CHECK(run("missing_barrier", 64, 64).error == "");
}

TEST_CASE("race detector: a read of threadgroup memory no thread wrote") {
  Settings keep;
  Run r = run("read_before_write", 64, 64);
  INFO(r.error);
  CHECK(has(r.error, "[msl-sim] read of uninitialised threadgroup memory in kernel "
                     "'msl_sim_control_read_before_write'"));
  CHECK(has(r.error, "threadgroup variable 'scratch' (byte 252 of 1024)"));
  CHECK(has(r.error, "lane 0 read it at " + at(41) + ", but no thread of the threadgroup has written it"));
  Run fixed = run("read_before_write_fixed", 64, 64);
  CHECK(fixed.error == "");
  for (uint32_t i = 0; i < 64; ++i) CHECK(fixed.out[i] == 63 - i);
}

TEST_CASE("race detector: two threads storing to one device address") {
  Settings keep;
  Run r = run("racing_device_write", 32, 16);
  INFO(r.error);
  CHECK(has(r.error, "[msl-sim] data race in kernel 'msl_sim_control_racing_device_write'"));
  CHECK(has(r.error, "on buffer(0) (byte 0 of 128)"));
  CHECK(has(r.error, "thread (0,0,0) of threadgroup (0,0,0) wrote it at " + at(56) +
                         " and thread (16,0,0) of threadgroup (1,0,0) wrote it at " + at(56)));
  CHECK(has(r.error, "different threadgroups are never ordered"));
  r = run("racing_device_write", 32, 32);
  INFO(r.error);
  CHECK(has(r.error, "with no threadgroup_barrier(mem_flags::mem_device) between"));
  // With atomics it is no race.
  Run fixed = run("racing_device_write_fixed", 32, 16);
  CHECK(fixed.error == "");
  for (uint32_t i = 0; i < 16; ++i) CHECK(fixed.out[i] == (i + 1) + (i + 17));
}

TEST_CASE("race detector: simd calls and device-only barriers do not order threadgroup memory") {
  Settings keep;
  Run r = run("simd_is_not_a_barrier", 32, 32);
  INFO(r.error);
  CHECK(has(r.error, "threadgroup variable 'slot'"));
  CHECK(has(r.error, "read it at " + at(95)));
  r = run("device_only_barrier", 32, 32);
  INFO(r.error);
  CHECK(has(r.error, "threadgroup variable 'slot'"));
  CHECK(has(r.error, "read it at " + at(104)));
  // threadgroup_barrier(mem_device) orders device memory within the group.
  Run ok = run("device_barrier_orders", 32, 32);
  CHECK(ok.error == "");
  CHECK(ok.out[5] == 12);
}

TEST_CASE("shuffle mode: lane-order-dependent kernels change, others do not") {
  Settings keep;
  const uint32_t n = 256;
  for (const char* name : {"lane_order", "lane_order_group"}) {
    INFO(name);
    int buffers = std::string(name) == "lane_order" ? 2 : 1;
    Run in_order = run(name, n, n, buffers);
    CHECK(in_order.error == "");  // atomics are no race
    CHECK(in_order.out == iota(n));
    msl::set_shuffle(true, 1234);
    Run a = run(name, n, n, buffers);
    msl::set_shuffle(true, 1234);
    Run b = run(name, n, n, buffers);
    msl::set_shuffle(false, 0);
    CHECK(a.error == "");
    CHECK(a.out != iota(n));  // order-dependent: a test comparing with the in-order result fails
    CHECK(a.out == b.out);    // the same seed gives the same order
    std::vector<uint32_t> sorted = a.out;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == iota(n));
  }
  // Several threadgroups run shuffled too, and an order-independent kernel is unchanged.
  msl::set_shuffle(true, 99);
  CHECK(run("lane_order_fixed", 1000, 64).out == iota(1000));
  CHECK(run("missing_barrier_fixed", 64, 64).error == "");
  CHECK(run("read_before_write", 64, 64).error != "");
}

TEST_CASE("race detector: one buffer bound twice, overlapping (an in-place op on overlapping views)") {
  Settings keep;
  Sim s;
  auto buf = s.zeros(33 * 4);
  auto& e = s.encode("msl_sim_control_overlapping_copy");
  e.set_buffer(buf, 0, 0);
  e.set_buffer(buf, 4, 1);
  e.dispatch_threads(size3(32), size3(32));
  std::string m;
  try {
    s.run();
  } catch (const RaceError& err) {
    m = err.what();
  }
  INFO(m);
  CHECK(has(m, "on buffer(0) (byte 4 of 132)"));
  CHECK(has(m, "thread (0,0,0) of threadgroup (0,0,0) wrote it at " + at(121) +
                   " and thread (1,0,0) of threadgroup (0,0,0) read it at " + at(121)));
  // Separate buffers: clean.
  auto in = s.zeros(32 * 4), out = s.zeros(32 * 4);
  auto& f = s.encode("msl_sim_control_overlapping_copy");
  f.set_buffer(in, 0, 0);
  f.set_buffer(out, 0, 1);
  f.dispatch_threads(size3(32), size3(32));
  s.run();
  CHECK(Sim::read<uint32_t>(out) == std::vector<uint32_t>(32, 1u));
}
