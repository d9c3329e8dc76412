// float32 exp log sin cos tanh sigmoid silu gelu gelu_tanh (and relu) on the CPU: the formulas of
// shaders/bm_exp_f32.h, bm_log_trig_f32.h and activation.h (shared with the Metal shaders, so CPU
// and simulator agree bit for bit), in loops compiled once per instruction set (csrc/cpu/isa.h)
// and vectorised 4 / 8 / 16 lanes wide. activation_f32.cpp.
#pragma once
#include <array>
#include <cstdint>

namespace bm::cpu {

enum class Act : int { tanh, sigmoid, silu, gelu, gelu_tanh, exp, log, sin, cos, relu };

// out[i] = act(x[i]) for i < n, contiguous (out may equal x).
void activation_f32(Act act, const float* x, float* out, int64_t n);
// out[i] = g[i] * act'(x[i]) (shaders/activation_grad.h) for i < n, contiguous (out may equal g or x).
enum class ActGrad : int { gelu, gelu_tanh, silu };
void activation_grad_f32(ActGrad act, const float* g, const float* x, float* out, int64_t n);

// Strided views and the half types: the N operands (byte strides, 0 for a broadcast) converted to
// float32 in chunks of 256, run(bufs, m) leaving its result in bufs[0], then rounded to T and stored
// (out may equal an operand: each chunk is read before it is written). The vector loops above give
// these the contiguous float32 bits at nearly its speed; scalar calls of the formulas would call
// libm's fma for every multiply-add on the baseline target.
template <typename T, int N, typename Run>
void f32_chunks(const std::array<const char*, N>& in, const std::array<int64_t, N>& st, char* out, int64_t so,
                int64_t n, Run&& run) {
  constexpr int64_t kChunk = 256;
  float buf[N][kChunk];
  for (int64_t k0 = 0; k0 < n; k0 += kChunk) {
    const int64_t m = n - k0 < kChunk ? n - k0 : kChunk;
    for (int i = 0; i < N; ++i)
      for (int64_t k = 0; k < m; ++k) buf[i][k] = float(*reinterpret_cast<const T*>(in[i] + (k0 + k) * st[i]));
    run(buf, m);
    for (int64_t k = 0; k < m; ++k) *reinterpret_cast<T*>(out + (k0 + k) * so) = T(buf[0][k]);
  }
}

}  // namespace bm::cpu
