// Exhaustive check of bm_log_f32 (shaders/bm_log_trig_f32.h) over every float32. Not part of the build.
//
//   g++ -O3 -std=c++17 -ffp-contract=off -mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma -Ishaders tools/check_log.cpp -o /tmp/check_log && /tmp/check_log
// (-mavx2 -mfma, or no flags for the baseline copy, whose fma is a libm call: about 5 minutes).
//
// Prints: the largest error over all positive finite x (subnormals included) in the sense of
// tests/harness.py's ulp_error, |got - log(x)| / spacing(float32(log(x))) with log in float64, and
// where; how many results are not the correctly rounded one (above 0.5 ulp); whether
// bm_log_normal_f32 gives bm_log_f32's bits on every positive normal x; the special values; and a
// hash of bm_log_f32's bits over all 2^32 inputs, to compare between builds (every copy, compiler
// and vector width must print the same).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "bm_log_trig_f32.h"

__attribute__((noinline)) void run_full(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = bm_log_f32(x[i]);
}
__attribute__((noinline)) void run_normal(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = bm_log_normal_f32(x[i]);
}

static float from_bits(uint32_t b) { float x; std::memcpy(&x, &b, 4); return x; }
static uint32_t to_bits(float x) { uint32_t b; std::memcpy(&b, &x, 4); return b; }

int main() {
  const int kN = 1 << 16;
  std::vector<float> x(kN), y(kN), yn(kN);
  double worst = 0;
  uint32_t worst_at = 0;
  uint64_t above_half = 0, normal_differs = 0, hash = 1469598103934665603ull;
  for (uint64_t b0 = 0; b0 < (1ull << 32); b0 += kN) {
    for (int i = 0; i < kN; ++i) x[i] = from_bits(uint32_t(b0 + i));
    run_full(x.data(), y.data(), kN);
    run_normal(x.data(), yn.data(), kN);
    for (int i = 0; i < kN; ++i) {
      const uint32_t b = uint32_t(b0 + i);
      hash = (hash ^ to_bits(y[i])) * 1099511628211ull;
      if (b == 0 || b >= 0x7f800000u) continue;  // zero, inf, NaN, negative: below
      if (b >= 0x00800000u) normal_differs += to_bits(yn[i]) != to_bits(y[i]);
      const double want = std::log(double(x[i]));
      const float w32 = std::fabs(float(want));
      const double spacing = double(std::nextafter(w32, INFINITY)) - double(w32);
      const double err = std::fabs(double(y[i]) - want) / spacing;
      above_half += err > 0.5;
      if (err > worst) worst = err, worst_at = b;
    }
  }
  std::printf("max error %.4f ulp at x = %.9g (bits 0x%08x, log %.9g); %llu of 2139095039 above 0.5 ulp\n", worst,
              from_bits(worst_at), worst_at, std::log(double(from_bits(worst_at))), (unsigned long long)above_half);
  std::printf("bm_log_normal_f32 differs from bm_log_f32 on %llu positive normal inputs\n",
              (unsigned long long)normal_differs);
  const uint32_t specials[] = {0u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u,
                               0xbf800000u, 0x80000001u, 0x3f800000u, 0x00000001u, 0x7f7fffffu};
  const int ns = sizeof(specials) / sizeof(specials[0]);
  for (int i = 0; i < ns; ++i) x[i] = from_bits(specials[i]);
  run_full(x.data(), y.data(), ns);  // through the vector loop (and its tail)
  for (int i = 0; i < ns; ++i) std::printf("  log(0x%08x = %g) = 0x%08x = %g\n", specials[i], x[i], to_bits(y[i]), y[i]);
  std::printf("hash of bm_log_f32 over all 2^32 inputs: %016llx\n", (unsigned long long)hash);
}
