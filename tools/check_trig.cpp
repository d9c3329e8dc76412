// Accuracy of the vectorised sin / cos formulas (shaders/bm_log_trig_f32.h) over EVERY float32 with
// |x| <= 4096 (2.3e9 values per function), against float64 sin / cos (glibc's, within an ulp of
// float64), in ulps as tests/harness.py's ulp_error measures them: |got - exact| over the spacing
// of float32(|exact|) upward. Checks the reduced forms (the ones the CPU loops and shaders take for
// |x| <= 4096), plus the formula they replaced and the rejected reduction by pi (tools/bench_trig.cpp),
// and sin(-0) = -0. Prints the largest error and where, for |x| <= 3 and for 3 < |x| <= 4096.
//
//   g++ -O3 -std=c++17 -ffp-contract=off -fno-math-errno -fno-trapping-math -Ishaders -mavx2 -mfma
//       -pthread tools/check_trig.cpp -o /tmp/check_trig && /tmp/check_trig [threads] [stride]
//
// About 80 s on 2 cores, most of it glibc's sincos (the reference). Any instruction set gives the
// same bits (bm_fma is correctly rounded everywhere); the baseline one calls libm's fmaf, slower.
// A stride > 1 checks every stride-th float only, for a quick look. Exits 1 on a NaN or a wrong
// sign of zero.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define BENCH_TRIG_NO_MAIN
#include "bench_trig.cpp"  // bm_log_trig_f32.h, old::, pi::

namespace {

struct Fn {
  const char* name;
  void (*run)(const float*, float*, int);
  bool is_sin;
};
#define FN(label, f, s) {label, [](const float* x, float* o, int n) { for (int i = 0; i < n; ++i) o[i] = f(x[i]); }, s}
const Fn kFns[] = {
    FN("new sin", bm_sin_reduced_f32, true), FN("new cos", bm_cos_reduced_f32, false),
    FN("old sin", old::sin, true),           FN("old cos", old::cos, false),
    FN("pi sin", pi::sin, true),             FN("pi cos", pi::cos, false),
};
constexpr int kNF = sizeof(kFns) / sizeof(kFns[0]);

struct Worst {
  double err = 0;
  float x = 0;
};
struct Part {
  Worst w[kNF][2];  // [function][0: |x| <= 3, 1: 3 < |x| <= 4096]
  long bad = 0;     // NaN results, or sin(+-0) with the wrong sign
};

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// floats with bits [b0, b1) (every stride-th), each with its negation
void check(uint32_t b0, uint32_t b1, uint32_t stride, Part* part) {
  const int kN = 4096;
  std::vector<float> x(kN), got(kN);
  std::vector<double> ref[2] = {std::vector<double>(kN), std::vector<double>(kN)};
  std::vector<double> ulp[2] = {std::vector<double>(kN), std::vector<double>(kN)};
  for (uint64_t b = b0; b < b1;) {
    int n = 0;
    for (; n < kN && b < b1; b += stride, n += 2) {
      x[n] = from_bits(uint32_t(b));
      x[n + 1] = -x[n];
    }
    for (int i = 0; i < n; ++i) {
      double s, c;
      sincos(double(x[i]), &s, &c);
      ref[0][i] = c;
      ref[1][i] = s;
      for (int k = 0; k < 2; ++k) {
        const float a = std::fabs(float(ref[k][i]));
        ulp[k][i] = double(std::nextafter(a, INFINITY) - a);
      }
    }
    for (int f = 0; f < kNF; ++f) {
      kFns[f].run(x.data(), got.data(), n);
      const std::vector<double>& want = ref[kFns[f].is_sin];
      const std::vector<double>& u = ulp[kFns[f].is_sin];
      for (int i = 0; i < n; ++i) {
        double e = std::fabs(double(got[i]) - want[i]) / u[i];
        if (std::isnan(e)) {
          e = INFINITY;
          ++part->bad;
        }
        if (kFns[f].is_sin && x[i] == 0.0f && std::signbit(got[i]) != std::signbit(x[i])) ++part->bad;
        Worst& w = part->w[f][std::fabs(x[i]) <= 3.0f ? 0 : 1];
        if (e > w.err) w = {e, x[i]};
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const uint32_t stride = argc > 2 ? uint32_t(std::atoi(argv[2])) : 1;
  uint32_t end;
  const float lim = 4096.0f;
  std::memcpy(&end, &lim, 4);
  ++end;  // bits of +0 ... 4096 inclusive
  const int parts = threads * 64;  // interleaved over the threads: the cost per float varies
  std::vector<Part> part(parts);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int p = t; p < parts; p += threads) {
        uint64_t b0 = uint64_t(end) * p / parts, b1 = uint64_t(end) * (p + 1) / parts;
        b0 = (b0 + stride - 1) / stride * stride;
        check(uint32_t(b0), uint32_t(b1), stride, &part[p]);
      }
    });
  for (std::thread& t : pool) t.join();
  long bad = 0;
  for (const Part& p : part) bad += p.bad;
  printf("every %u-th float32 with |x| <= 4096; NaN results or sin(+-0) of the wrong sign: %ld\n", stride, bad);
  for (int f = 0; f < kNF; ++f)
    for (int r = 0; r < 2; ++r) {
      Worst w;
      for (const Part& p : part)
        if (p.w[f][r].err > w.err) w = p.w[f][r];
      printf("%-8s %-15s max %.4f ulp at x = %.9g (%a)\n", kFns[f].name, r ? "3 < |x| <= 4096" : "|x| <= 3", w.err,
             double(w.x), double(w.x));
    }
  return bad != 0;
}
