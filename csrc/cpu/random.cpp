// uniform, normal and randint: Philox bits mapped to floats by the formulas in shaders/philox.h, which the
// Metal kernels share. Element i of a draw uses counter block rng_offset + i / 4, word i % 4
// (float64 uses two words per value: block rng_offset + i / 2).
#include <cmath>

#include "core/random.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"
#include "philox.h"

namespace bm::cpu {

namespace {

// Applies value(i) for each linear index i of out, whatever out's strides.
template <typename T, typename F>
void fill_indexed(Tensor& out, F value) {
  StridedPlan<1> plan({&out}, /*logical_order=*/true);
  parallel_for(0, plan.numel(), 4096, [&](int64_t b, int64_t e) {
    int64_t i = b;
    plan.run_range(b, e, [&](std::array<char*, 1> p, std::array<int64_t, 1> st, int64_t n) {
      for (int64_t k = 0; k < n; ++k, ++i) *reinterpret_cast<T*>(p[0] + k * st[0]) = value(i);
    });
  });
}

double uniform_f64(bm_u32 a, bm_u32 b) {  // 53 random bits
  return double((bm_u64(a >> 5) << 26) | (b >> 6)) * (1.0 / 9007199254740992.0);
}

template <typename T>
struct UniformKernel {
  static void run(const KernelCall& c) {
    const OpArgs& a = *c.args;
    uint64_t seed = a.seed, first = a.rng_offset;
    if constexpr (std::is_same_v<T, double>) {
      double lo = a.s0.f, span = a.s1.f - a.s0.f;
      fill_indexed<T>(*c.out, [&](int64_t i) {
        bm_philox_out r = bm_philox_block(seed, first + uint64_t(i / 2));
        int w = int(i % 2) * 2;
        return std::fma(uniform_f64(r.v[w], r.v[w + 1]), span, lo);
      });
    } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>) {
      float lo = float(a.s0.f), span = float(a.s1.f - a.s0.f);
      fill_indexed<T>(*c.out, [&](int64_t i) {
        bm_u32 w = bm_philox_block(seed, first + uint64_t(i / 4)).v[i % 4];
        float u = std::is_same_v<T, float> ? bm_uniform_f32(w)
                  : std::is_same_v<T, half_t> ? bm_uniform_f16_exact(w) : bm_uniform_bf16_exact(w);
        return T(std::fma(u, span, lo));
      });
    }
  }
};

template <typename T>
struct NormalKernel {
  static void run(const KernelCall& c) {
    const OpArgs& a = *c.args;
    uint64_t seed = a.seed, first = a.rng_offset;
    if constexpr (std::is_same_v<T, double>) {
      double mean = a.s0.f, sd = a.s1.f;
      fill_indexed<T>(*c.out, [&](int64_t i) {
        bm_philox_out r = bm_philox_block(seed, first + uint64_t(i / 2));
        double u1 = 1.0 - uniform_f64(r.v[0], r.v[1]), u2 = uniform_f64(r.v[2], r.v[3]);
        double rad = std::sqrt(-2.0 * std::log(u1)), th = 6.283185307179586476925 * u2;
        return std::fma(i % 2 ? rad * std::sin(th) : rad * std::cos(th), sd, mean);
      });
    } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>) {
      float mean = float(a.s0.f), sd = float(a.s1.f);
      fill_indexed<T>(*c.out, [&](int64_t i) {
        bm_philox_out r = bm_philox_block(seed, first + uint64_t(i / 4));
        int lane = int(i % 4), w = lane & 2;
        return T(std::fma(bm_normal_f32(r.v[w], r.v[w + 1], lane & 1), sd, mean));
      });
    }
  }
};

// randint: low + bits % range (shaders/philox.h), the sum taken in uint64 so it wraps like the
// shader's; the host has checked that [low, high) fits the output dtype.
template <typename T>
struct RandintKernel {
  static void run(const KernelCall& c) {
    const OpArgs& a = *c.args;
    const uint64_t seed = a.seed, first = a.rng_offset, low = uint64_t(a.s0.i);
    const uint64_t range = uint64_t(a.s1.i) - low;
    const bool wide = range > (uint64_t(1) << 32);
    fill_indexed<T>(*c.out, [&](int64_t i) {
      int64_t v = int64_t(low + bm_randint_offset(seed, first, uint64_t(i), range, wide));
      if constexpr (std::is_same_v<T, half_t> || std::is_same_v<T, bfloat16_t>) return T(float(v));
      else return T(v);
    });
  }
};

}  // namespace

void register_random_kernels(Backend& b) {
  register_for_row<UniformKernel>(b, OpId::uniform);
  register_for_row<NormalKernel>(b, OpId::normal);
  register_for_row<RandintKernel>(b, OpId::randint);
}

}  // namespace bm::cpu
