// float32 tanh, sigmoid, silu, gelu, gelu_tanh on the CPU: the formulas of shaders/activation.h
// (shared with the Metal shaders, so CPU and simulator agree bit for bit), in loops the compiler
// vectorises 16 / 8 lanes wide where the CPU has AVX-512 / AVX2. activation_f32.cpp.
#pragma once
#include <cstdint>

namespace bm::cpu {

enum class Act : int { tanh, sigmoid, silu, gelu, gelu_tanh };

// out[i] = act(x[i]) for i < n, contiguous (out may equal x).
void activation_f32(Act act, const float* x, float* out, int64_t n);
// One value, the same bits as the loop (for strided views and the half types).
float activation_f32(Act act, float x);

}  // namespace bm::cpu
