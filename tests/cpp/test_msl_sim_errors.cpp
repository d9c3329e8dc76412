// Kernel bugs and invalid dispatches the MSL simulator must turn into exceptions (never a hang,
// an abort or silent corruption), with messages that name the kernel, the buffer and the thread.
#include <doctest/doctest.h>

#include <string>

#include "core/errors.h"
#include "msl_sim/launch.h"
#include "sim_helpers.h"

using namespace bm;
using test::Sim;
using test::size3;

namespace {

// Runs `kernel` with buffer(0) (and buffer(1) if given); returns the error message ("" if none).
template <class E>
std::string failure(Sim& s, const std::string& kernel, size_t grid, size_t tg, size_t out_bytes,
                    size_t in_bytes = 0) {
  auto out = s.zeros(out_bytes);
  std::shared_ptr<metal::Buffer> in;
  auto& e = s.encode(kernel);
  if (in_bytes) {
    in = s.zeros(in_bytes);
    e.set_buffer(in, 0, 0);
    e.set_buffer(out, 0, 1);
  } else {
    e.set_buffer(out, 0, 0);
  }
  e.dispatch_threads(size3(grid), size3(tg));
  s.cb->commit();
  CHECK(s.cb->status() == metal::CommandStatus::Error);
  std::string msg;
  try {
    s.cb->wait_until_completed();
  } catch (const E& err) {
    msg = err.what();
  }
  CHECK(msg == s.cb->error());
  return msg;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("msl-sim error: a barrier only some threads reach") {
  Sim s;
  std::string m = failure<Error>(s, "partial_barrier", 32, 32, 128);
  INFO(m);
  CHECK(has(m, "kernel 'partial_barrier'"));
  CHECK(has(m, "faults.metal:7"));
  CHECK(has(m, "reached by only 5 of the 32 threads"));
  CHECK(has(m, "the other 27 returned"));
}

TEST_CASE("msl-sim error: threads waiting at different barriers, diverged simd calls") {
  Sim s;
  std::string m = failure<Error>(s, "split_barriers", 8, 8, 32);
  INFO(m);
  CHECK(has(m, "different barriers"));
  m = failure<Error>(s, "divergent_simd", 32, 32, 128);
  INFO(m);
  CHECK(has(m, "simd_sum"));
  CHECK(has(m, "simd_max"));
  CHECK(has(m, "diverged"));
}

TEST_CASE("msl-sim error: out-of-bounds writes name the kernel, buffer and thread") {
  Sim s;
  std::string m = failure<IndexError>(s, "write_past_end", 40, 32, 32 * 4);
  INFO(m);
  CHECK(has(m, "kernel 'write_past_end'"));
  CHECK(has(m, "buffer(0)"));
  CHECK(has(m, "thread (32,0,0)"));
  CHECK(has(m, "byte offset 128 of a 128-byte region"));
  // A buffer bound at an offset is only the rest of the buffer.
  auto out = s.zeros(64);
  auto& e = s.encode("write_past_end");
  e.set_buffer(out, 32, 0);
  e.dispatch_threads(size3(9), size3(9));
  s.cb->commit();
  CHECK_THROWS_AS(s.cb->wait_until_completed(), IndexError);
}

TEST_CASE("msl-sim error: a fault inside a fiber is carried out and the simulator stays usable") {
  Sim s;
  std::string m = failure<IndexError>(s, "fault_after_barrier", 64, 64, 64 * 4, 120 * 4);
  INFO(m);
  CHECK(has(m, "buffer(0)"));
  CHECK(has(m, "thread (20,0,0)"));  // the first thread whose in[gid + 100] is past 120 floats
  // Threadgroup variables are checked too.
  m = failure<IndexError>(s, "threadgroup_overrun", 17, 17, 17 * 4);
  INFO(m);
  CHECK(has(m, "threadgroup variable 'small'"));
  // A correct kernel with barriers still runs after the failures.
  const uint32_t n = 64;
  std::vector<float> x(n, 1.0f);
  auto in = s.buffer(x), out = s.zeros(4);
  auto& e = s.encode("tree_sum_float");
  e.set_buffer(in, 0, 0);
  e.set_buffer(out, 0, 1);
  e.set_bytes(&n, 4, 2);
  e.dispatch_threadgroups(size3(1), size3(64));
  s.run();
  CHECK(Sim::read<float>(out)[0] == 64.0f);
}

TEST_CASE("msl-sim error: threadgroups larger than 1024 threads or than the kernel allows") {
  Sim s;
  auto out = s.zeros(4096 * 4);
  auto& e = s.encode("write_past_end");
  e.set_buffer(out, 0, 0);
  CHECK_THROWS_WITH_AS(e.dispatch_threads(size3(2048), size3(1025)),
                       doctest::Contains("1025 threads exceeds the maximum of 1024"), ValueError);
  CHECK_THROWS_AS(e.dispatch_threadgroups(size3(1), size3(32, 32, 2)), ValueError);
  e.dispatch_threads(size3(1024), size3(1024));  // the limit itself is fine
  s.run();
  CHECK(s.rt->pipeline("limited").max_total_threads_per_threadgroup() == 64);
  auto& l = s.encode("limited");
  l.set_buffer(out, 0, 0);
  CHECK_THROWS_WITH_AS(l.dispatch_threads(size3(128), size3(128)), doctest::Contains("maximum of 64"), ValueError);
  // The dispatcher refuses too when called directly.
  msl::LaunchSpec spec;
  spec.kernel = msl::find_kernel("write_past_end");
  spec.threads_per_group = {2048, 1, 1};
  spec.grid = {2048, 1, 1};
  CHECK_THROWS_AS(msl::run_kernel(spec), ValueError);
}

TEST_CASE("msl-sim error: threadgroup memory over 32 KiB, unset buffers, bad encoder arguments") {
  Sim s;
  std::string m = failure<ValueError>(s, "too_much_threadgroup_memory", 4, 4, 16);
  INFO(m);
  CHECK(has(m, "32768 bytes of threadgroup memory"));
  auto& e = s.encode("write_past_end");
  e.dispatch_threads(size3(4), size3(4));
  s.cb->commit();
  CHECK_THROWS_WITH_AS(s.cb->wait_until_completed(), doctest::Contains("buffer(0) was not set"), Error);
  auto& d = s.encode("dynamic_sum");
  CHECK_THROWS_AS(d.set_threadgroup_memory_length(10, 0), ValueError);
  CHECK_THROWS_AS(d.set_threadgroup_memory_length(40000, 0), ValueError);
  std::vector<char> big(5000);
  CHECK_THROWS_AS(d.set_bytes(big.data(), big.size(), 1), ValueError);
  CHECK_THROWS_AS(d.set_buffer(s.zeros(4), 0, 31), ValueError);
  CHECK_THROWS_AS(d.dispatch_threads(size3(0), size3(4)), ValueError);
  CHECK_THROWS_AS(s.rt->new_buffer(0), ValueError);
}

TEST_CASE("msl-sim error: a collective in a kernel the pre-pass thought had none") {
  // Run a barrier kernel as if it had been classified barrier-free: the lanes run one after the
  // other, so the barrier cannot work; it must say so rather than return wrong results.
  msl::KernelInfo info = *msl::find_kernel("partial_barrier");
  info.needs_fibers = false;
  Sim s;
  auto out = s.zeros(128);
  msl::LaunchSpec spec;
  spec.kernel = &info;
  spec.buffers[0] = msl::BufferArg{static_cast<char*>(out->contents()), 128, true, false};
  spec.threads_per_group = {4, 1, 1};
  spec.grid = {4, 1, 1};
  CHECK_THROWS_WITH_AS(msl::run_kernel(spec), doctest::Contains("pre-pass found no barrier or simd call"), Error);
}

TEST_CASE("msl-sim error: a kernel name no shader defines") {
  Sim s;
  CHECK_THROWS_WITH_AS(s.rt->pipeline("no_such_kernel"), doctest::Contains("no kernel named 'no_such_kernel'"), Error);
  CHECK(msl::find_kernel("no_such_kernel") == nullptr);
  CHECK_THROWS_WITH_AS(s.rt->pipeline("defined_twice"), doctest::Contains("is defined twice: in tests/msl_sim/"), Error);
  auto cb = s.rt->new_command_buffer();
  CHECK_THROWS_AS(cb->wait_until_completed(), Error);  // waiting on work never committed
}
