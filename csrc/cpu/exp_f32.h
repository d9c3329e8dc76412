// exp for float32 written with plain arithmetic and selects, so loops calling it vectorise (libm's
// expf is a scalar call). Within 2 ulp of the exact value over the whole range; exp(-inf) = 0,
// exp(inf) = inf, NaN stays NaN, results below the normal range round through the subnormals.
#pragma once
#include <cstdint>
#include <cstring>

namespace bm::cpu {

inline float exp_f32(float x) {
  // Clamp to where the result is 0 / inf anyway; comparisons are false for NaN, which passes through.
  float xc = x < -104.0f ? -104.0f : x;
  xc = xc > 89.0f ? 89.0f : xc;
  // k = round(x / ln2) with the 1.5 * 2^23 trick (no float->int conversion of a possible NaN).
  const float kMagic = 12582912.0f;
  float v = xc * 1.44269504088896341f + kMagic;
  float kf = v - kMagic;
  int32_t vb, mb;
  std::memcpy(&vb, &v, 4);
  std::memcpy(&mb, &kMagic, 4);
  int32_t k = vb - mb;
  // r = x - k ln2 in two steps (Cody-Waite): k * 0.693359375 is exact for |k| <= 2^14.
  float r = xc - kf * 0.693359375f;
  r = r + kf * 2.12194440e-4f;
  // exp(r) for |r| <= ln2 / 2: Taylor series to r^7 (truncation < 2^-28).
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // Scale by 2^k as 2^k1 * 2^k2 so each factor is a normal float for k in [-150, 128].
  int32_t k1 = k >> 1, k2 = k - k1;
  int32_t b1 = (k1 + 127) << 23, b2 = (k2 + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &b1, 4);
  std::memcpy(&s2, &b2, 4);
  return p * s1 * s2;
}

// out[i] = exp_f32(x[i] - shift) for i < n (out may equal x). Runs 16 / 8 lanes wide where the
// CPU has AVX-512 / AVX2; the operations and their order are the same at every width (no FMA), so
// the results are bit-identical on every x86-64 machine. exp_f32.cpp.
void exp_shifted_f32(const float* x, float shift, float* out, int64_t n);

// The softmax row passes, vectorised the same way. Sums use 16 fixed accumulator lanes (element i
// goes to lane i % 16, lanes added pairwise at the end), so the order, and the bits, do not
// depend on the vector width either.
// NaN-propagating maximum of x[0 .. n), n >= 1.
float max_f32(const float* x, int64_t n);
// out[i] = exp_f32(x[i] - shift) (out may equal x, or be null to only sum); returns the sum.
float exp_shifted_sum_f32(const float* x, float shift, float* out, int64_t n);
// y[i] *= s
void scale_f32(float* y, float s, int64_t n);
// y[i] = (x[i] - a) - b (y may equal x)
void sub2_f32(const float* x, float a, float b, float* y, int64_t n);

}  // namespace bm::cpu
