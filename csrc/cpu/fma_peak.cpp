// The CPU's measured float32 FMA throughput (bm._core._fma_peak_gflops): every pool thread runs a
// loop of independent FMAs on registers, in the copy (cpu/isa.h) the kernels use. The benchmarks
// report a kernel's GFLOP/s as a fraction of this rather than of lanes x clock: the clock
// /proc/cpuinfo gives is not the one the cores reach (Zen 4 VMs report 2.6 GHz and run 3.7), which
// put torch's and our direct convolutions at 130% of "peak".
#include <chrono>
#include <cstdint>
#include <vector>
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "core/parallel.h"
#include "cpu/isa.h"

namespace bm::cpu {
namespace BM_ISA_NS {

// Per copy: the vector, its three operations, and how many independent accumulators run (more
// than FMA latency x units, 4 x 2 on Zen 4 and Intel's server cores, and with the two operands no
// more than the registers: 24 of AVX-512's 32; 12 of AVX2's 16, where 24 spilled and read 98
// GFLOP/s a core on Zen 4 against 117). The baseline copy: one float, a multiply and an add (its
// kernels' form), counted as one FMA.
#if defined(__AVX512F__)
using V = __m512;
constexpr int kChains = 24;
inline V splat(float v) { return _mm512_set1_ps(v); }
inline V mul_add(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
inline float lane0(V v) { return _mm512_cvtss_f32(v); }
#elif defined(__AVX2__) && defined(__FMA__)
using V = __m256;
constexpr int kChains = 12;
inline V splat(float v) { return _mm256_set1_ps(v); }
inline V mul_add(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
inline float lane0(V v) { return _mm256_cvtss_f32(v); }
#else
using V = float;
constexpr int kChains = 12;
inline V splat(float v) { return v; }
inline V mul_add(V a, V b, V c) { return a * b + c; }
inline float lane0(V v) { return v; }
#endif
constexpr int kLanes = int(sizeof(V) / sizeof(float));

// `iters` rounds of kChains FMAs; returns a value that depends on every one (kept by the caller).
float fma_loop(int64_t iters) {
  V c[kChains];
  for (int i = 0; i < kChains; ++i) c[i] = splat(float(i));
  volatile float factor = 0.999999f;  // read each round: the loop cannot be folded or hoisted
  const V b = splat(1e-6f);
  for (int64_t k = 0; k < iters; ++k) {
    const V a = splat(factor);
#pragma GCC unroll 24
    for (int i = 0; i < kChains; ++i) c[i] = mul_add(c[i], a, b);
  }
  float s = 0.0f;
  for (int i = 0; i < kChains; ++i) s += lane0(c[i]);
  return s;
}

double fma_peak_gflops(double seconds) {
  const int threads = num_threads();
  const int64_t iters = int64_t(1) << 16;  // 0.2-2 ms a call
  const double flops = 2.0 * kLanes * kChains * double(iters) * threads;
  std::vector<float> sink(size_t(threads), 0.0f);
  double best = 0.0, spent = 0.0;
  while (spent < seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    parallel_for(0, threads, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) sink[size_t(t)] += fma_loop(iters);
    });
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    spent += dt;
    if (dt > 0.0 && flops / dt > best) best = flops / dt;
  }
  volatile float keep = sink[0];
  (void)keep;
  return best / 1e9;
}

}  // namespace BM_ISA_NS

BM_ISA_DECLARE(double fma_peak_gflops(double seconds))

#if BM_ISA_IS_BASE
double measured_fma_peak_gflops(double seconds) { return BM_ISA_CALL(fma_peak_gflops, seconds); }
#endif

}  // namespace bm::cpu
