// ns/element of the shared float32 formulas (shaders/*.h) in the CPU loops' form, single thread, on a
// 16K-float array (64 KiB in, 64 KiB out: L1/L2), every entry timed in one process, the entries
// alternating round by round, the minimum over the rounds reported. Not part of the build.
//
// Build the copies csrc/cpu/isa.h compiles, with the flags of the project's Release build (-O3:
// GCC 12 at -O2 vectorises none of these loops; always -ffp-contract=off):
//   F="-O3 -std=c++17 -fno-math-errno -fno-trapping-math -ffp-contract=off -Ishaders"
//   g++ $F -mavx512f -mavx512bw -mavx512dq -mavx512vl -mfma tools/bench_formulas.cpp -o /tmp/bench_avx512
//   g++ $F -mavx2 -mfma tools/bench_formulas.cpp -o /tmp/bench_avx2
// Run:  taskset -c 1 /tmp/bench_avx512 [rounds] [name ...]     (default 30 rounds, every entry)
// Check which loops vectorised (zmm in the AVX-512 copy, ymm in the AVX2 one; a scalar loop has
// only xmm):
//   objdump -d -C --no-show-raw-insn /tmp/bench_avx512 | awk '/^[0-9a-f]+ </ {f = $0} /zmm/ {n[f]++} END {for (f in n) print n[f], f}' | grep loop_
//
// To add a function: a row in kEntries below, with loop_plain<f> (the plain loop `out[i] = f(x[i])`,
// as csrc/cpu/activation_f32.cpp's loop) or loop_blocks<full, reduced, mask, offset, top> (its
// blocks of 256 taking the reduced form where every input's bits b pass (b & mask) - offset <= top,
// as it does for exp, sigmoid, silu, sin, cos, gelu and log). To compare against a previous
// version, paste it below renamed (as bm_log_f32_old, bm_tanh_old). sin and cos against their
// previous form: tools/bench_trig.cpp.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "activation.h"
#include "bm_exp_f32.h"
#include "bm_log_trig_f32.h"

// The bm_log_f32 this branch replaces (atanh form, one division per element), for comparison.
inline float bm_log_f32_old(float x) {
  const bool sub = x < 1.17549435e-38f;
  const float xs = sub ? x * 8388608.0f : x;
  const bm_i32 b = bm_i32(bm_u32(bm_float_bits(xs)) - bm_u32(0x3f3504f3));
  const bm_i32 e = (b >> 23) - (sub ? 23 : 0);
  const float m = bm_bits_float((b & 0x007fffff) + 0x3f3504f3);
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float t = 0.22222222f;
  t = bm_fma(t, z, 0.28571429f);
  t = bm_fma(t, z, 0.40000001f);
  t = bm_fma(t, z, 0.66666669f);
  t = t * z;
  const float hf = 0.5f * f * f;
  const float ef = float(e);
  const float r = bm_fma(ef, 0.693359375f, f - (hf - bm_fma(s, hf + t, ef * -2.12194440e-4f)));
  const float inf = bm_bits_float(0x7f800000);
  return x > 0.0f ? (x < inf ? r : x) : (x == 0.0f ? -inf : bm_bits_float(0x7fc00000));
}

// The bm_tanh that expm1's form replaced (a polynomial below 0.625 and (1 - e) / (1 + e) above, both
// evaluated for every element).
inline float bm_tanh_old(float x) {
  const float a = bm_fabs(x);
  const float u = x * x;
  float q = 0.002138226293027401f;
  q = bm_fma(q, u, -0.008171788416802883f);
  q = bm_fma(q, u, 0.021698210388422012f);
  q = bm_fma(q, u, -0.053946252912282944f);
  q = bm_fma(q, u, 0.1333320140838623f);
  q = bm_fma(q, u, -0.3333333134651184f);
  const float small = bm_fma(x, u * q, x);
  const float e = bm_exp_f32(-2.0f * a);
  const float big = (1.0f - e) / (1.0f + e);
  // x == 0 returns x itself: x + x * (u q) would turn -0 into +0.
  return a < 0.625f ? (x == 0.0f ? x : small) : (x < 0.0f ? -big : big);  // NaN: big is NaN
}

typedef void (*LoopFn)(const float*, float*, int64_t);

template <float (*F)(float)>
__attribute__((noinline)) void loop_plain(const float* x, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = F(x[i]);
}

template <float (*Full)(float), float (*Reduced)(float), uint32_t kMask, uint32_t kOffset, uint32_t kTop>
__attribute__((noinline)) void loop_blocks(const float* x, float* out, int64_t n) {
  constexpr int64_t kBlk = 256;
  for (int64_t i = 0; i < n; i += kBlk) {
    const int64_t m = n - i < kBlk ? n - i : kBlk;
    const float* xb = x + i;
    float* ob = out + i;
    uint32_t top = 0;
    for (int64_t k = 0; k < m; ++k) {
      const uint32_t b = (uint32_t(bm_float_bits(xb[k])) & kMask) - kOffset;
      top = top > b ? top : b;
    }
    if (top > kTop) {
      for (int64_t k = 0; k < m; ++k) ob[k] = Full(xb[k]);
    } else {
      for (int64_t k = 0; k < m; ++k) ob[k] = Reduced(xb[k]);
    }
  }
}

// The block tests of csrc/cpu/activation_f32.cpp: |x| <= 86, 4096, 4.24; positive normal.
#define BM_ABS_AT_MOST(bits) 0x7fffffffu, 0u, bits
#define BM_POSITIVE_NORMAL 0xffffffffu, 0x00800000u, 0x7effffffu
constexpr uint32_t k86 = 0x42ac0000u, k4096 = 0x45800000u, k4_24 = 0x4087ae14u;

struct Entry {
  const char* name;
  LoopFn loop;
  float lo, hi;     // inputs drawn uniformly from [lo, hi] ...
  bool log_scale;   // ... or log-uniformly (lo > 0)
};

const Entry kEntries[] = {
    {"log_old", loop_plain<bm_log_f32_old>, 1e-3f, 1e3f, true},
    {"log", loop_plain<bm_log_f32>, 1e-3f, 1e3f, true},
    {"log_blocks", loop_blocks<bm_log_f32, bm_log_normal_f32, BM_POSITIVE_NORMAL>, 1e-3f, 1e3f, true},
    {"exp", loop_plain<bm_exp_f32>, -20.0f, 20.0f, false},
    {"exp_blocks", loop_blocks<bm_exp_f32, bm_exp_f32_normal, BM_ABS_AT_MOST(k86)>, -20.0f, 20.0f, false},
    {"tanh_old", loop_plain<bm_tanh_old>, -5.0f, 5.0f, false},
    {"tanh", loop_plain<bm_tanh>, -5.0f, 5.0f, false},
    {"sigmoid", loop_plain<bm_sigmoid>, -10.0f, 10.0f, false},
    {"sigmoid_blocks", loop_blocks<bm_sigmoid, bm_sigmoid_normal, BM_ABS_AT_MOST(k86)>, -10.0f, 10.0f, false},
    {"silu_blocks", loop_blocks<bm_silu, bm_silu_normal, BM_ABS_AT_MOST(k86)>, -10.0f, 10.0f, false},
    {"sin_blocks", loop_blocks<bm_sin_f32, bm_sin_reduced_f32, BM_ABS_AT_MOST(k4096)>, -4.0f, 4.0f, false},
    {"cos_blocks", loop_blocks<bm_cos_f32, bm_cos_reduced_f32, BM_ABS_AT_MOST(k4096)>, -4.0f, 4.0f, false},
    {"gelu_blocks", loop_blocks<bm_gelu, bm_gelu_mid, BM_ABS_AT_MOST(k4_24)>, -4.0f, 4.0f, false},
};

int main(int argc, char** argv) {
  const int64_t n = 16384;
  const int passes = 200;  // loop calls per timing (3.3M elements, about a millisecond)
  int rounds = argc > 1 ? std::atoi(argv[1]) : 30;
  if (rounds <= 0) rounds = 30;
  std::vector<const Entry*> sel;
  for (const Entry& e : kEntries) {
    bool want = argc <= 2;
    for (int a = 2; a < argc; ++a) want |= std::strcmp(argv[a], e.name) == 0;
    if (want) sel.push_back(&e);
  }
  std::vector<std::vector<float>> xs(sel.size(), std::vector<float>(n));
  uint64_t s = 12345;
  for (size_t k = 0; k < sel.size(); ++k) {
    for (int64_t i = 0; i < n; ++i) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      const double u = double(s >> 11) / 9007199254740992.0;  // [0, 1)
      const Entry& e = *sel[k];
      xs[k][i] = e.log_scale ? float(std::exp(std::log(double(e.lo)) + u * std::log(double(e.hi) / e.lo)))
                             : float(e.lo + u * (double(e.hi) - e.lo));
    }
  }
  std::vector<float> out(n);
  std::vector<double> best(sel.size(), 1e30);
  double check = 0;
  for (int r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < sel.size(); ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int p = 0; p < passes; ++p) sel[k]->loop(xs[k].data(), out.data(), n);
      const auto t1 = std::chrono::steady_clock::now();
      const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / (double(passes) * n);
      if (ns < best[k]) best[k] = ns;
      check += out[r % n];
    }
  }
  for (size_t k = 0; k < sel.size(); ++k) std::printf("%-12s %.4f ns/element\n", sel[k]->name, best[k]);
  std::printf("(min of %d rounds of %d x %lld elements; checksum %g)\n", rounds, passes, (long long)n, check);
}
