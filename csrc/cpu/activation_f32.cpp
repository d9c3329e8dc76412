// The loops of activation_f32.h (the activations and their derivatives). This file is compiled once per instruction set
// (bessemer_isa_variants in CMakeLists.txt, csrc/cpu/isa.h), always with -ffp-contract=off: the
// AVX2/AVX-512 copies have FMA, and a contracted a * b + c would round differently from the
// baseline copy and the shaders. The formulas' explicit fma calls (bm_fma) are correctly rounded
// at every width, so every copy gives the same bits.
#include "cpu/activation_f32.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "cpu/isa.h"

namespace bm::cpu {
BM_ISA_DECLARE(void activation_loop(Act act, const float* x, float* out, int64_t n))
BM_ISA_DECLARE(void activation_grad_loop(ActGrad act, const float* g, const float* x, float* out, int64_t n))
}

namespace bm::cpu::BM_ISA_NS {

// The shared formulas, included inside this copy's namespace so each copy has its own (an inline
// function compiled for AVX2 must not be what a baseline caller links to).
#include "activation.h"        // shaders/activation.h (with bm_exp_f32.h, erf.h)
#include "activation_grad.h"   // shaders/activation_grad.h
#include "bm_log_trig_f32.h"   // shaders/bm_log_trig_f32.h

namespace {

template <Act A>
inline float act_one(float x) {
  if constexpr (A == Act::tanh) return bm_tanh(x);
  else if constexpr (A == Act::sigmoid) return bm_sigmoid(x);
  else if constexpr (A == Act::silu) return bm_silu(x);
  else if constexpr (A == Act::gelu) return bm_gelu(x);
  else if constexpr (A == Act::gelu_tanh) return bm_gelu_tanh(x);
  else if constexpr (A == Act::exp) return bm_exp_f32(x);
  else if constexpr (A == Act::log) return bm_log_f32(x);
  else if constexpr (A == Act::sin) return bm_sin_f32(x);
  else if constexpr (A == Act::cos) return bm_cos_f32(x);
  else return x < 0.0f ? 0.0f : x;  // relu: NaN and -0 pass through, as torch (one vector max)
}

// The reduced form of an activation that has one, giving the full form's bits where it applies:
// exp, sigmoid and silu with exp's normal-range form (no clamps, one scaling); sin and cos without
// the libm fallback beyond 4096; gelu without erfc's large-argument fit and its two divisions, and
// with exp's normal-range form; log for positive normal x, without the subnormal scaling and the
// special values.
template <Act A>
constexpr bool has_fast_form() {
  return A == Act::exp || A == Act::sigmoid || A == Act::silu || A == Act::sin || A == Act::cos || A == Act::gelu ||
         A == Act::gelu_tanh || A == Act::log;
}

// Which inputs may take it, as a test on the bits b of x that a vector loop does with an and, a
// subtraction and an unsigned max: (b & fast_mask) - fast_offset <= fast_top. |x| <= L for most
// (the sign masked off), L inside each reduced form's range: 86 for exp's normal-range form (valid
// on [-86, 88]), 4096 for sin and cos, 4.24 for gelu (|x / sqrt2| < 3), 9 for gelu_tanh (|2u| < 67);
// log: b in [0x00800000, 0x7f7fffff], positive normal. A NaN's bits fail every test.
// Whether every x[0..m) passes the test (bits & mask) - offset <= top: one unsigned max a vector.
inline bool block_fits(const float* x, int64_t m, bm_u32 mask, bm_u32 offset, bm_u32 top) {
  bm_u32 hi = 0;
  for (int64_t k = 0; k < m; ++k) {
    const bm_u32 b = (bm_u32(bm_float_bits(x[k])) & mask) - offset;
    hi = hi > b ? hi : b;
  }
  return hi <= top;
}

template <Act A>
inline bm_u32 fast_mask() { return A == Act::log ? 0xffffffffu : 0x7fffffffu; }
template <Act A>
inline bm_u32 fast_offset() { return A == Act::log ? 0x00800000u : 0u; }
template <Act A>
inline bm_u32 fast_top() {
  if constexpr (A == Act::log) return 0x7effffffu;
  else if constexpr (A == Act::gelu) return bm_u32(bm_float_bits(4.24f));
  else if constexpr (A == Act::gelu_tanh) return bm_u32(bm_float_bits(9.0f));
  else if constexpr (A == Act::sin || A == Act::cos) return bm_u32(bm_float_bits(4096.0f));
  else return bm_u32(bm_float_bits(86.0f));
}

template <Act A>
inline float act_fast(float x) {
  if constexpr (A == Act::exp) return bm_exp_f32_normal(x);
  else if constexpr (A == Act::sigmoid) return bm_sigmoid_normal(x);
  else if constexpr (A == Act::silu) return bm_silu_normal(x);
  else if constexpr (A == Act::gelu) return bm_gelu_mid(x);
  else if constexpr (A == Act::gelu_tanh) return bm_gelu_tanh_normal(x);
  else if constexpr (A == Act::log) return bm_log_normal_f32(x);
  else if constexpr (A == Act::sin) return bm_sin_reduced_f32(x);
  else return bm_cos_reduced_f32(x);
}

template <Act A>
void loop(const float* x, float* out, int64_t n) {
  if constexpr (has_fast_form<A>()) {
    // The reduced forms run vectorised over blocks where every element qualifies (almost always);
    // any other block takes the full form. The test is one unsigned max over the block (two float
    // comparisons and their masks a vector cost half the gain of exp's reduced form).
    constexpr int64_t kBlk = 256;
    const bm_u32 mask = fast_mask<A>(), offset = fast_offset<A>(), limit = fast_top<A>();
    for (int64_t i = 0; i < n; i += kBlk) {
      const int64_t m = n - i < kBlk ? n - i : kBlk;
      const float* xb = x + i;
      float* ob = out + i;
      if (!block_fits(xb, m, mask, offset, limit)) {  // read before anything is written: out may equal x
        for (int64_t k = 0; k < m; ++k) ob[k] = act_one<A>(xb[k]);
      } else {
        for (int64_t k = 0; k < m; ++k) ob[k] = act_fast<A>(xb[k]);
      }
    }
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = act_one<A>(x[i]);
  }
}

template <ActGrad A>
inline float grad_one(float x) {
  if constexpr (A == ActGrad::gelu) return bm_gelu_grad(x);
  else if constexpr (A == ActGrad::gelu_tanh) return bm_gelu_tanh_grad(x);
  else return bm_silu_grad(x);
}

// The derivatives' reduced forms (the same bits), and the |x| up to which a block may take them:
// gelu's below |x / sqrt2| < 3 with exp's normal-range form; gelu_tanh's and silu's with exp's
// normal-range form (|2u| < 67 for |x| <= 9; |x| <= 86).
template <ActGrad A>
inline float grad_fast(float x) {
  if constexpr (A == ActGrad::gelu) return bm_gelu_grad_mid(x);
  else if constexpr (A == ActGrad::gelu_tanh) return bm_gelu_tanh_grad_normal(x);
  else return bm_silu_grad_normal(x);
}
template <ActGrad A>
inline float grad_fast_limit() {
  if constexpr (A == ActGrad::gelu) return 4.24f;
  else if constexpr (A == ActGrad::gelu_tanh) return 9.0f;
  else return 86.0f;
}

// Blocks of 256 as loop() does: the largest |x| of the block, from its bits, picks the form.
template <ActGrad A>
void grad_loop(const float* g, const float* x, float* out, int64_t n) {
  constexpr int64_t kBlk = 256;
  const bm_u32 limit = bm_u32(bm_float_bits(grad_fast_limit<A>()));
  for (int64_t i = 0; i < n; i += kBlk) {
    const int64_t m = n - i < kBlk ? n - i : kBlk;
    const float* gb = g + i;
    const float* xb = x + i;
    float* ob = out + i;
    if (!block_fits(xb, m, 0x7fffffffu, 0u, limit)) {  // read before anything is written: out may equal g or x
      for (int64_t k = 0; k < m; ++k) ob[k] = gb[k] * grad_one<A>(xb[k]);
    } else {
      for (int64_t k = 0; k < m; ++k) ob[k] = gb[k] * grad_fast<A>(xb[k]);
    }
  }
}

}  // namespace

void activation_grad_loop(ActGrad act, const float* g, const float* x, float* out, int64_t n) {
  switch (act) {
    case ActGrad::gelu: return grad_loop<ActGrad::gelu>(g, x, out, n);
    case ActGrad::gelu_tanh: return grad_loop<ActGrad::gelu_tanh>(g, x, out, n);
    case ActGrad::silu: return grad_loop<ActGrad::silu>(g, x, out, n);
  }
}

void activation_loop(Act act, const float* x, float* out, int64_t n) {
  switch (act) {
    case Act::tanh: return loop<Act::tanh>(x, out, n);
    case Act::sigmoid: return loop<Act::sigmoid>(x, out, n);
    case Act::silu: return loop<Act::silu>(x, out, n);
    case Act::gelu: return loop<Act::gelu>(x, out, n);
    case Act::gelu_tanh: return loop<Act::gelu_tanh>(x, out, n);
    case Act::exp: return loop<Act::exp>(x, out, n);
    case Act::log: return loop<Act::log>(x, out, n);
    case Act::sin: return loop<Act::sin>(x, out, n);
    case Act::cos: return loop<Act::cos>(x, out, n);
    case Act::relu: return loop<Act::relu>(x, out, n);
  }
}

}  // namespace bm::cpu::BM_ISA_NS

#if BM_ISA_IS_BASE  // the entry points, compiled once
namespace bm::cpu {

void activation_f32(Act act, const float* x, float* out, int64_t n) { BM_ISA_CALL(activation_loop, act, x, out, n); }

void activation_grad_f32(ActGrad act, const float* g, const float* x, float* out, int64_t n) {
  BM_ISA_CALL(activation_grad_loop, act, g, x, out, n);
}

}  // namespace bm::cpu
#endif
