#include "cpu/isa.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace bm::cpu {

namespace {

Isa best_supported() {
#if defined(BESSEMER_ISA_VARIANTS) && defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return Isa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::avx2;
#endif
  return Isa::base;
}

Isa pick() {
  const Isa best = best_supported();
  const char* want = std::getenv("BESSEMER_CPU_ISA");
  if (!want || !*want) return best;
  for (Isa i : {Isa::base, Isa::avx2, Isa::avx512})  // never above what the CPU runs
    if (std::strcmp(want, isa_name(i)) == 0) return int(i) < int(best) ? i : best;
  return best;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    default: return "base";
  }
}

Isa cpu_isa() {
  static const Isa isa = pick();
  return isa;
}

bool cpu_zen3_or_zen4() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool zen = [] {
    __builtin_cpu_init();
    if (!__builtin_cpu_is("amd")) return false;
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    const unsigned family = ((a >> 8) & 0xf) + ((a >> 20) & 0xff);  // base + extended family
    return family == 0x19;
  }();
  return zen;
#else
  return false;
#endif
}

}  // namespace bm::cpu
