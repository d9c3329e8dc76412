// Speed of the vectorised sin / cos formulas (shaders/bm_log_trig_f32.h), old against new in one
// process: the reduced forms the CPU loop (csrc/cpu/activation_f32.cpp) runs over blocks with
// |x| <= 4096, in a loop out[i] = f(x[i]) over 16K floats in [-10, 10] (in L1), single thread; the
// kernels alternate and each reports its best of 25 runs, in ns per element.
//
//   g++ -O3 -std=c++17 -ffp-contract=off -fno-math-errno -fno-trapping-math -Ishaders
//       -mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma tools/bench_trig.cpp -o /tmp/bench_trig
//   (or -mavx2 -mfma for the AVX2 copy); /tmp/bench_trig
//   objdump -d /tmp/bench_trig | grep -c zmm     # vectorised? (ymm for AVX2)
//
// -O3 and the two -fno flags are the project's (CMake Release, CMakeLists.txt); -ffp-contract=off
// as every copy of the loop. At -O2 GCC 12 leaves these loops scalar, 6-7x slower.
// "old" is the formula this one replaced (Taylor series after an unfused Cody-Waite reduction by
// pi/2, both series evaluated for every element), copied here; "pi" is the rejected alternative
// (reduction by pi and one odd polynomial of degree 11: faster, but 1.65 ulp near |r| = pi/2 and
// 1.8 ulp for cos near 0.56, measured over every float by tools/check_trig.cpp).
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "bm_log_trig_f32.h"

namespace old {
inline float sincos_reduced(float x, int shift) {
  const float kMagic = 12582912.0f;
  const float v = x * 0.636619772f + kMagic;
  const float jf = v - kMagic;
  const bm_i32 q = (bm_float_bits(v) - bm_float_bits(kMagic) + shift) & 3;
  float r = x - jf * 1.57080078125f;
  r = r - jf * -4.4535845518112183e-06f;
  r = r - jf * -8.7055157527160532e-10f;
  const float z = r * r;
  float ps = 2.75573192e-6f;
  ps = ps * z + -1.98412698e-4f;
  ps = ps * z + 8.33333333e-3f;
  ps = ps * z + -1.66666667e-1f;
  const float sn = r + r * (z * ps);
  float pc = -2.75573192e-7f;
  pc = pc * z + 2.48015873e-5f;
  pc = pc * z + -1.38888889e-3f;
  pc = pc * z + 4.16666667e-2f;
  const float cs = (1.0f - 0.5f * z) + (z * z) * pc;
  const float w = (q & 1) != 0 ? cs : sn;
  return (q & 2) != 0 ? -w : w;
}
inline float sin(float x) { return x == 0.0f ? x : sincos_reduced(x, 0); }
inline float cos(float x) { return sincos_reduced(x, 1); }
}  // namespace old

namespace pi {
inline float sin_poly(float r) {  // |r| <= pi/2 + 1e-3
  const float z = r * r;
  float p = -2.55332857e-08f;
  p = bm_fma(p, z, 2.76281912e-06f);
  p = bm_fma(p, z, -1.98431037e-04f);
  p = bm_fma(p, z, 8.33335053e-03f);
  p = bm_fma(p, z, -1.66666672e-01f);
  return bm_fma(r * z, p, r);
}
inline float sin(float x) {  // (-1)^j sin(x - j pi), j = round(x / pi)
  const float kMagic = 12582912.0f;
  const float v = bm_fma(x, 0.318309886f, kMagic);
  const float j = v - kMagic;
  float r = bm_fma(j, -3.14159250f, x);
  r = bm_fma(j, -1.50995788e-07f, r);
  r = bm_fma(j, -1.07806059e-14f, r);
  const float s = sin_poly(r);
  return x == 0.0f ? x : bm_bits_float(bm_float_bits(s) ^ bm_i32(bm_u32(bm_float_bits(v)) << 31));
}
inline float cos(float x) {  // (-1)^j sin(x - (j - 1/2) pi), j = round(x / pi + 1/2)
  const float kMagic = 12582912.0f;
  const float v = bm_fma(x, 0.318309886f, 0.5f) + kMagic;
  const float h = (v - kMagic) - 0.5f;
  float r = bm_fma(h, -3.14159250f, x);
  r = bm_fma(h, -1.50995788e-07f, r);
  r = bm_fma(h, -1.07806059e-14f, r);
  return bm_bits_float(bm_float_bits(sin_poly(r)) ^ bm_i32(bm_u32(bm_float_bits(v)) << 31));
}
}  // namespace pi

#ifndef BENCH_TRIG_NO_MAIN  // tools/check_trig.cpp includes the formulas above
#define LOOP(name, f)                                                   \
  __attribute__((noinline)) void name(const float* x, float* out, int n) { \
    for (int i = 0; i < n; ++i) out[i] = f(x[i]);                          \
  }
LOOP(old_sin, old::sin)
LOOP(old_cos, old::cos)
LOOP(new_sin, bm_sin_reduced_f32)
LOOP(new_cos, bm_cos_reduced_f32)
LOOP(pi_sin, pi::sin)
LOOP(pi_cos, pi::cos)

int main() {
  const int n = 16384, reps = 40, runs = 25;
  std::vector<float> x(n), out(n);
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  for (float& v : x) v = u(gen);
  struct Kernel { const char* name; void (*f)(const float*, float*, int); double best; };
  Kernel ks[] = {{"old sin", old_sin, 1e30}, {"new sin", new_sin, 1e30}, {"pi sin", pi_sin, 1e30},
                 {"old cos", old_cos, 1e30}, {"new cos", new_cos, 1e30}, {"pi cos", pi_cos, 1e30}};
  volatile float sink = 0.0f;
  for (int run = 0; run < runs; ++run) {
    for (Kernel& k : ks) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) {
        k.f(x.data(), out.data(), n);
        sink = sink + out[r];
      }
      const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
      if (ns / (double(reps) * n) < k.best) k.best = ns / (double(reps) * n);
    }
  }
  for (int i = 0; i < 6; ++i)
    printf("%-8s %.3f ns/element  (old / this: %.2f)\n", ks[i].name, ks[i].best, ks[i / 3 * 3].best / ks[i].best);
}
#endif
