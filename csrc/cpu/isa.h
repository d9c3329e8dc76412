// Run-time choice between copies of the hot CPU loops compiled for different instruction sets, so
// one portable build uses AVX2+FMA or AVX-512 where the machine has them.
//
// A source listed in bessemer_isa_variants() (CMakeLists.txt) is compiled once as it is (BM_ISA
// undefined: namespace isa_base) and, on x86-64, again with -mavx2 -mfma (BM_ISA=avx2) and with
// -mavx512f/bw/dq/vl (BM_ISA=avx512), always with -ffp-contract=off: a multiply-add is fused only
// where the source says fma, so every copy computes the same bits. Such a source puts its loops in
// `namespace bm::cpu::BM_ISA_NS { ... }` and its public entry points under `#if BM_ISA_IS_BASE`
// (compiled once), which call BM_ISA_CALL(fn, args...). Declarations every copy provides go
// through BM_ISA_DECLARE.
//
// A copy must not leave code that other translation units could pick up: the shared formula
// headers are included inside the ISA namespace, and nothing in a copy runs at load time (an
// AVX2 instruction in a static initialiser would crash a machine without AVX2).
#pragma once

namespace bm::cpu {

enum class Isa : int { base = 0, avx2 = 1, avx512 = 2 };

// The instruction set the loops use, decided once: the best the CPU supports, or lower where the
// environment variable BESSEMER_CPU_ISA (base, avx2, avx512) asks for it (tests run every copy).
Isa cpu_isa();
const char* isa_name(Isa isa);

// Whether the CPU is an AMD Zen 3 or Zen 4 (family 19h), whose FMA units are 256 bits wide (a
// 512-bit FMA takes both): a multiplication costs twice what it does on a core with two 512-bit
// units (Intel's AVX-512 server cores), so algorithms that trade multiplications for memory
// traffic (the stride-2 Winograd convolutions) pay on smaller problems. A property of the
// hardware, not of the copy BESSEMER_CPU_ISA picks: every copy takes the same path, same bits.
bool cpu_zen3_or_zen4();

// The float32 FMA throughput every pool thread together reaches, GFLOP/s, in the copy cpu_isa()
// picks: the best of repeated runs of a register-only FMA loop over about `seconds` (fma_peak.cpp).
// For the benchmarks' "fraction of peak".
double measured_fma_peak_gflops(double seconds);

}  // namespace bm::cpu

#ifndef BM_ISA
#define BM_ISA base
#define BM_ISA_IS_BASE 1
#else
#define BM_ISA_IS_BASE 0
#endif
#define BM_ISA_CAT_(a, b) a##b
#define BM_ISA_CAT(a, b) BM_ISA_CAT_(a, b)
#define BM_ISA_NS BM_ISA_CAT(isa_, BM_ISA)

// The copies this build has: BESSEMER_ISA_VARIANTS is defined by the CMake function where it built
// the x86-64 copies (not on arm64, where the baseline has NEON, nor for other compilers).
#if defined(BESSEMER_ISA_VARIANTS) && defined(__x86_64__)
#define BM_ISA_DECLARE(...)                     \
  namespace isa_base { __VA_ARGS__; }           \
  namespace isa_avx2 { __VA_ARGS__; }           \
  namespace isa_avx512 { __VA_ARGS__; }
#define BM_ISA_CALL(fn, ...)                                                         \
  (::bm::cpu::cpu_isa() == ::bm::cpu::Isa::avx512 ? ::bm::cpu::isa_avx512::fn(__VA_ARGS__) \
   : ::bm::cpu::cpu_isa() == ::bm::cpu::Isa::avx2 ? ::bm::cpu::isa_avx2::fn(__VA_ARGS__)   \
                                                   : ::bm::cpu::isa_base::fn(__VA_ARGS__))
#else
#define BM_ISA_DECLARE(...) \
  namespace isa_base { __VA_ARGS__; }
#define BM_ISA_CALL(fn, ...) (::bm::cpu::isa_base::fn(__VA_ARGS__))
#endif
