// The MSL simulator's features, driven through the runtime interface (runtime_sim.cpp) with the
// kernels of tests/msl_sim/*.metal: barriers and threadgroup memory, simd functions, atomics,
// vector types, half rounding, multi-dimensional grids.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>

#include "core/half.h"
#include "kargs.h"
#include "sim_helpers.h"

using namespace bm;
using test::Sim;
using test::size3;

TEST_CASE("msl-sim: tree reduction through static threadgroup memory and barriers") {
  Sim s;
  const uint32_t n = 1000, tg = 256, groups = (n + tg - 1) / tg;
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = float(i % 17) - 3.0f;
  auto in = s.buffer(x), out = s.zeros(groups * 4);
  auto& e = s.encode("tree_sum_float");
  e.set_buffer(in, 0, 0);
  e.set_buffer(out, 0, 1);
  e.set_bytes(&n, 4, 2);
  e.dispatch_threadgroups(size3(groups), size3(tg));
  s.run();
  auto r = Sim::read<float>(out);
  for (uint32_t g = 0; g < groups; ++g) {
    float want = 0;
    for (uint32_t i = g * tg; i < std::min(n, (g + 1) * tg); ++i) want += x[i];
    CHECK(r[g] == doctest::Approx(want));
  }
}

TEST_CASE("msl-sim: the same template instantiated for int, dynamic threadgroup memory, a helper") {
  Sim s;
  const uint32_t n = 64;
  std::vector<int> xi(n);
  std::iota(xi.begin(), xi.end(), 1);
  auto in = s.buffer(xi), out = s.zeros(8);
  auto& e = s.encode("tree_sum_int");
  e.set_buffer(in, 0, 0);
  e.set_buffer(out, 0, 1);
  e.set_bytes(&n, 4, 2);
  e.dispatch_threadgroups(size3(2), size3(32));
  s.run();
  auto r = Sim::read<int>(out);
  CHECK(r[0] == 32 * 33 / 2);
  CHECK(r[1] == 64 * 65 / 2 - 32 * 33 / 2);

  std::vector<float> xf(128, 0.5f);
  auto inf = s.buffer(xf), outf = s.zeros(8);
  auto& d = s.encode("dynamic_sum");
  d.set_buffer(inf, 0, 0);
  d.set_buffer(outf, 0, 1);
  d.set_threadgroup_memory_length(64 * 4, 0);
  d.dispatch_threadgroups(size3(2), size3(64));
  s.run();
  CHECK(Sim::read<float>(outf) == std::vector<float>{32.0f, 32.0f});
}

TEST_CASE("msl-sim: simd_sum then threadgroup partials, with a partial last simdgroup") {
  Sim s;
  const uint32_t n = 200;  // one group of 200: simdgroups of 32 x 6 and 8
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = float(i);
  auto in = s.buffer(x), out = s.zeros(4);
  auto& e = s.encode("simd_tree_sum");
  e.set_buffer(in, 0, 0);
  e.set_buffer(out, 0, 1);
  e.set_bytes(&n, 4, 2);
  e.dispatch_threads(size3(n), size3(n));
  s.run();
  CHECK(Sim::read<float>(out)[0] == float(n * (n - 1) / 2));
}

TEST_CASE("msl-sim: simd functions over a full and a partial simdgroup") {
  Sim s;
  const uint32_t n = 40, W = 32, K = 12;  // one threadgroup: lanes 0..31 and 32..39
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = float((i * 7) % 23);
  auto in = s.buffer(x), out = s.zeros(n * K * 4), votes = s.zeros(n * 4);
  auto& e = s.encode("simd_ops");
  e.set_buffer(in, 0, 0);
  e.set_buffer(out, 0, 1);
  e.set_buffer(votes, 0, 2);
  e.dispatch_threads(size3(n), size3(n));
  s.run();
  auto r = Sim::read<float>(out);
  auto v = Sim::read<uint32_t>(votes);
  for (uint32_t g = 0; g < n; ++g) {
    uint32_t base = g / W * W, lane = g % W, count = std::min(W, n - base);
    auto val = [&](uint32_t l) { return x[base + l]; };
    auto o = [&](int k) { return r[g * K + k]; };
    float sum = 0, mx = -1e30f, mn = 1e30f, pre = 0;
    uint32_t ballot = 0;
    for (uint32_t l = 0; l < count; ++l) {
      sum += val(l);
      mx = std::max(mx, val(l));
      mn = std::min(mn, val(l));
      if (l < lane) pre += val(l);
      if (val(l) > 10) ballot |= 1u << l;
    }
    INFO("thread " << g);
    CHECK(o(0) == sum);
    CHECK(o(1) == mx);
    CHECK(o(2) == mn);
    CHECK(o(3) == pre);
    CHECK(o(4) == pre + val(lane));
    // shuffle_down past lane 31 keeps the caller's value; reading a lane that does not exist in
    // a partial simdgroup gives poison (NaN).
    float down = lane + 1 >= W ? val(lane) : lane + 1 < count ? val(lane + 1) : NAN;
    CHECK((std::isnan(down) ? std::isnan(o(5)) : o(5) == down));
    CHECK(o(6) == (lane < 2 ? val(lane) : val(lane - 2)));
    float xr = (lane ^ 3) < count ? val(lane ^ 3) : NAN;
    CHECK((std::isnan(xr) ? std::isnan(o(7)) : o(7) == xr));
    CHECK(o(8) == val(2));
    uint32_t src = (lane + 5) % 32;
    CHECK((src < count ? o(9) == val(src) : std::isnan(o(9))));
    CHECK(o(10) == val(0));
    CHECK(o(11) == (lane == 0 ? 1.0f : 0.0f));
    CHECK(v[g] == ballot);
  }
}

TEST_CASE("msl-sim: simd_sum counts only threads that have not returned; shuffle-down loops") {
  Sim s;
  const uint32_t n = 21;  // 32-thread group, 11 threads return at once
  std::vector<float> x(32, 2.0f);
  auto in = s.buffer(x), out = s.zeros(64 * 4);
  auto& e = s.encode("simd_sum_active");
  e.set_buffer(in, 0, 0);
  e.set_buffer(out, 0, 1);
  e.set_bytes(&n, 4, 2);
  e.dispatch_threads(size3(32), size3(32));
  s.run();
  auto r = Sim::read<float>(out);
  for (uint32_t g = 0; g < n; ++g) {
    CHECK(r[g * 2] == 2.0f * n);
    CHECK(r[g * 2 + 1] == float(n));
  }
  CHECK(r[n * 2] == 0.0f);

  std::vector<int> xi(64);
  std::iota(xi.begin(), xi.end(), 0);
  auto ini = s.buffer(xi), outi = s.zeros(8);
  auto& d = s.encode("shuffle_reduce");
  d.set_buffer(ini, 0, 0);
  d.set_buffer(outi, 0, 1);
  d.dispatch_threads(size3(64), size3(64));
  s.run();
  CHECK(Sim::read<int>(outi) == std::vector<int>{31 * 32 / 2, 63 * 64 / 2 - 31 * 32 / 2});
}

TEST_CASE("msl-sim: atomics on device and threadgroup memory") {
  Sim s;
  const uint32_t n = 300;
  std::vector<uint32_t> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = (i * 13) % 101;
  auto in = s.buffer(x), bins = s.zeros(9 * 4), total = s.zeros(4);
  auto& e = s.encode("histogram");
  e.set_buffer(in, 0, 0);
  e.set_buffer(bins, 0, 1);
  e.set_buffer(total, 0, 2);
  e.dispatch_threads(size3(n), size3(64));
  s.run();
  std::vector<uint32_t> want(9, 0);
  float sum = 0;
  for (uint32_t v : x) {
    want[v % 8]++;
    want[8] = std::max(want[8], v);
    sum += float(v);
  }
  CHECK(Sim::read<uint32_t>(bins) == want);
  CHECK(Sim::read<float>(total)[0] == sum);

  auto counts = s.zeros(5 * 4);
  auto& c = s.encode("count_odd");
  c.set_buffer(in, 0, 0);
  c.set_buffer(counts, 0, 1);
  c.dispatch_threads(size3(n), size3(64));
  s.run();
  auto r = Sim::read<uint32_t>(counts);
  for (uint32_t g = 0; g < 5; ++g) {
    uint32_t odd = 0;
    for (uint32_t i = g * 64; i < std::min(n, g * 64 + 64); ++i) odd += x[i] % 2;
    CHECK(r[g] == odd);
  }
}

namespace {
struct VecOut {
  float swizzled[4], written[4], three[4];
  int32_t converted[4];
  uint32_t bits[2];
  float len, pad;
};
static_assert(sizeof(VecOut) == 80, "matches the MSL struct: float3 is 16 bytes");
}  // namespace

TEST_CASE("msl-sim: vectors: layout, swizzles, conversions") {
  Sim s;
  std::vector<float> v = {1.25f, -2.5f, 3.75f, 4.0f, 0.5f, 0.25f, -0.125f, 8.0f};
  auto in = s.buffer(v), out = s.zeros(2 * sizeof(VecOut));
  auto& e = s.encode("vec_ops");
  e.set_buffer(in, 0, 0);
  e.set_buffer(out, 0, 1);
  e.dispatch_threads(size3(2), size3(2));
  s.run();
  auto r = Sim::read<VecOut>(out);
  for (int g = 0; g < 2; ++g) {
    const float* a = &v[g * 4];
    const VecOut& o = r[g];
    CHECK(std::vector<float>(o.swizzled, o.swizzled + 4) == std::vector<float>{a[3], a[2], a[1], a[0]});
    CHECK(std::vector<float>(o.written, o.written + 4) == std::vector<float>{2 * a[2], a[3], a[2] + 10, a[3] + 20});
    CHECK(std::vector<float>(o.three, o.three + 3) == std::vector<float>{2 * a[0], 2 * a[1], 14.0f});
    for (int i = 0; i < 4; ++i) CHECK(o.converted[i] == int32_t(a[i] * 10.0f));
    uint32_t b0, b1;
    std::memcpy(&b0, &a[0], 4);
    std::memcpy(&b1, &a[1], 4);
    CHECK(o.bits[0] == b0);
    CHECK(o.bits[1] == b1);
    CHECK(o.len == doctest::Approx(std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])));
  }
}

TEST_CASE("msl-sim: half arithmetic rounds after every operation, like core/half.h") {
  Sim s;
  std::vector<half_t> a, b;
  for (int i = 0; i < 64; ++i) {
    a.push_back(half_t(0.1f * float(i) - 3.3f));
    b.push_back(half_t(1.0f / float(i + 3)));
  }
  a.push_back(half_t(60000.0f));  // x + y overflows to inf
  b.push_back(half_t(10000.0f));
  uint32_t n = uint32_t(a.size());
  auto A = s.buffer(a), B = s.buffer(b), out = s.zeros(n * 6 * 2);
  auto& e = s.encode("half_ops");
  e.set_buffer(A, 0, 0);
  e.set_buffer(B, 0, 1);
  e.set_buffer(out, 0, 2);
  e.dispatch_threads(size3(n), size3(32));
  s.run();
  auto r = Sim::read<half_t>(out);
  for (uint32_t i = 0; i < n; ++i) {
    float x = a[i], y = b[i];
    INFO("i = " << i);
    CHECK(r[i * 6 + 0].bits == half_t(x + y).bits);
    CHECK(r[i * 6 + 1].bits == half_t(float(half_t(x * y)) + 0.5f).bits);
    CHECK(r[i * 6 + 2].bits == half_t(x * y + 0.5f).bits);
    CHECK(r[i * 6 + 3].bits == half_t(std::max(x, y)).bits);
    CHECK(r[i * 6 + 4].bits == half_t(y * 2.0f).bits);
    CHECK(r[i * 6 + 5].bits == half_t(std::exp(x)).bits);
  }
}

TEST_CASE("msl-sim: a 3-d grid with non-uniform edge threadgroups (dispatch_threads)") {
  Sim s;
  const uint32_t X = 5, Y = 3, Z = 2, TX = 2, TY = 2, TZ = 1;
  uint32_t grid[4] = {X, Y, Z, 0};
  auto out = s.zeros(X * Y * Z * 4 * 16);
  auto& e = s.encode("grid_ids");
  e.set_buffer(out, 0, 0);
  e.set_bytes(grid, 16, 1);
  e.dispatch_threads(size3(X, Y, Z), size3(TX, TY, TZ));
  s.run();
  auto r = Sim::read<uint32_t>(out);
  for (uint32_t z = 0; z < Z; ++z)
    for (uint32_t y = 0; y < Y; ++y)
      for (uint32_t x = 0; x < X; ++x) {
        const uint32_t* o = &r[((z * Y + y) * X + x) * 16];
        INFO("thread " << x << "," << y << "," << z);
        CHECK(o[0] == x);
        CHECK(o[1] == y);
        CHECK(o[2] == z);
        CHECK(o[3] == 1);  // written exactly by this thread
        uint32_t sx = std::min(TX, X - x / TX * TX), sy = std::min(TY, Y - y / TY * TY);
        CHECK(o[4] == x % TX);
        CHECK(o[5] == y % TY);
        CHECK(o[6] == 0);
        CHECK(o[7] == (y % TY) * sx + x % TX);  // thread_index_in_threadgroup in the actual group
        CHECK(o[8] == sx);                       // threads_per_threadgroup: smaller at the edge
        CHECK(o[9] == sy);
        CHECK(o[10] == 1);
        CHECK(o[11] == X);  // threads_per_grid
        CHECK(o[12] == x / TX);
        CHECK(o[13] == y / TY);
        CHECK(o[14] == z);
        CHECK(o[15] == Y);
      }
}

TEST_CASE("msl-sim: the strided copy kernel through the runtime") {
  Sim s;
  // A 3x4 float tensor viewed transposed (shape 4x3, strides 1,4) copied to a contiguous buffer.
  std::vector<float> src(12);
  std::iota(src.begin(), src.end(), 0.0f);
  CopyStridedArgs args{};  // the struct the Metal backend will fill, shared with the shader
  args.numel = 12;
  args.ndim = 2;
  args.shape[0] = 4, args.shape[1] = 3;
  args.in_strides[0] = 1, args.in_strides[1] = 4;
  args.out_strides[0] = 3, args.out_strides[1] = 1;
  auto in = s.buffer(src), out = s.zeros(12 * 4);
  auto& e = s.encode("copy_strided_float32");
  e.set_buffer(in, 0, 0);
  e.set_buffer(out, 0, 1);
  e.set_bytes(&args, sizeof(args), 2);
  e.dispatch_threads(size3(12), size3(32));
  s.run();
  CHECK(Sim::read<float>(out) == std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  for (const char* dt : {"bool", "int32", "int64", "float16", "bfloat16", "float32"})
    CHECK(s.rt->pipeline(std::string("copy_strided_") + dt).name() == std::string("copy_strided_") + dt);
}
