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
// One value, the same bits as the loop (for strided views and the half types).
float activation_f32(Act act, float x);

}  // namespace bm::cpu
