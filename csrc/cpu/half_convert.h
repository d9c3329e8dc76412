// float16 / bfloat16 <-> float32 over contiguous runs, vectorised (half_convert.cpp). The same bits
// as the scalar conversions of core/half.h (half_t, bfloat16_t), NaN payloads included: every copy
// computes them with the same integer and float operations, selects in place of branches.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/half.h"

namespace bm::cpu {

void half_to_float_run(const uint16_t* h, float* f, int64_t n);
void float_to_half_run(const float* f, uint16_t* h, int64_t n);
void bf16_to_float_run(const uint16_t* b, float* f, int64_t n);
void float_to_bf16_run(const float* f, uint16_t* b, int64_t n);

// out[0 .. n) = in[0 .. n) converted, by the runs above where the pair is float32 <-> float16 /
// bfloat16; false, having done nothing, for any other pair. (A template, so the calls of the pairs
// not taken are never instantiated.)
template <typename S, typename T>
bool convert_half_run(const S* in, T* out, int64_t n) {
  const auto* i16 = reinterpret_cast<const uint16_t*>(in);
  auto* o16 = reinterpret_cast<uint16_t*>(out);
  if constexpr (std::is_same_v<T, float> && std::is_same_v<S, half_t>) half_to_float_run(i16, out, n);
  else if constexpr (std::is_same_v<T, float> && std::is_same_v<S, bfloat16_t>) bf16_to_float_run(i16, out, n);
  else if constexpr (std::is_same_v<T, half_t> && std::is_same_v<S, float>) float_to_half_run(in, o16, n);
  else if constexpr (std::is_same_v<T, bfloat16_t> && std::is_same_v<S, float>) float_to_bf16_run(in, o16, n);
  else return false;
  return true;
}

}  // namespace bm::cpu
