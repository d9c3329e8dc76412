// float32 exp log sin cos tanh sigmoid silu gelu gelu_tanh on the CPU: the formulas of
// shaders/bm_exp_f32.h, bm_log_trig_f32.h and activation.h (shared with the Metal shaders, so CPU
// and simulator agree bit for bit), in loops compiled once per instruction set (csrc/cpu/isa.h)
// and vectorised 4 / 8 / 16 lanes wide. activation_f32.cpp.
#pragma once
#include <cstdint>

namespace bm::cpu {

enum class Act : int { tanh, sigmoid, silu, gelu, gelu_tanh, exp, log, sin, cos };

// out[i] = act(x[i]) for i < n, contiguous (out may equal x).
void activation_f32(Act act, const float* x, float* out, int64_t n);
// out[k * so] = act(x[k * sx]) for k < n, byte strides (sx may be 0), T float or a half type:
// converted to float32 in chunks that run through the vector loop above, so strided views and the
// half types get the contiguous loop's bits at nearly its speed (chunk by chunk, so out may equal x).
template <typename T>
void activation_f32_strided(Act act, const char* x, int64_t sx, char* out, int64_t so, int64_t n) {
  constexpr int64_t kChunk = 256;
  float buf[kChunk];
  for (int64_t k0 = 0; k0 < n; k0 += kChunk) {
    const int64_t m = n - k0 < kChunk ? n - k0 : kChunk;
    for (int64_t k = 0; k < m; ++k) buf[k] = float(*reinterpret_cast<const T*>(x + (k0 + k) * sx));
    activation_f32(act, buf, buf, m);
    for (int64_t k = 0; k < m; ++k) *reinterpret_cast<T*>(out + (k0 + k) * so) = T(buf[k]);
  }
}

}  // namespace bm::cpu
