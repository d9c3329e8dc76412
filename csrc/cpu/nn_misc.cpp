// dropout, embedding and nll_loss (the gather behind cross_entropy). shaders/nn_misc.metal
// computes the same formulas, so both backends give the same bits.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/ops_nn_misc.h"
#include "cpu/convert.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"
#include "philox.h"

namespace bm::cpu {

namespace {

template <typename T>
constexpr bool kFloat = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, half_t> ||
                        std::is_same_v<T, bfloat16_t>;

// Words of Philox blocks first .. first + n - 1, four per block. A loop of independent blocks:
// the CPU overlaps their ten dependent rounds, which one block at a time leaves it waiting on.
void philox_words(uint64_t seed, uint64_t first, int64_t n, bm_u32* out) {
  for (int64_t k = 0; k < n; ++k) {
    bm_philox_out r = bm_philox_block(seed, first + uint64_t(k));
    for (int w = 0; w < 4; ++w) out[4 * k + w] = r.v[w];
  }
}

// Element i (logical row-major index) is kept iff bm_uniform_f32(word i % 4 of Philox block
// rng_offset + i / 4) >= p, then scaled: out = x * (kept ? scale : 0), in float (double for
// float64) and rounded on store. Multiplying dropped elements by 0 keeps NaN/inf inputs NaN, as
// torch's input * mask does.
template <typename T>
struct DropoutKernel {
  static constexpr int64_t kSpan = 4096;  // elements whose words are generated at once (16 KiB)

  static void run(const KernelCall& c) {
    if constexpr (kFloat<T>) {
      using A = acc_t<T>;
      const OpArgs& a = *c.args;
      const uint64_t seed = a.seed, first = a.rng_offset;
      const float p = float(a.p);
      const A scale = std::is_same_v<A, double> ? A(1.0 / (1.0 - a.p)) : A(float(1.0 / (1.0 - a.p)));
      StridedPlan<2> plan({c.out, c.in[0]}, /*logical_order=*/true);
      parallel_for(0, plan.numel(), kSpan, [&](int64_t b, int64_t e) {
        bm_u32 words[kSpan + 8];
        for (int64_t s = b; s < e; s += kSpan) {
          const int64_t stop = std::min(e, s + kSpan), b0 = s / 4;
          philox_words(seed, first + uint64_t(b0), (stop - 1) / 4 - b0 + 1, words);
          const bm_u32* wd = words + (s - 4 * b0);  // the word of element s
          int64_t i = 0;
          plan.run_range(s, stop, [&](std::array<char*, 2> ptr, std::array<int64_t, 2> st, int64_t n) {
            const bm_u32* w = wd + i;
            i += n;
            if (st[0] == sizeof(T) && st[1] == sizeof(T)) {  // contiguous: a loop the compiler vectorizes
              T* o = reinterpret_cast<T*>(ptr[0]);
              const T* x = reinterpret_cast<const T*>(ptr[1]);
              for (int64_t k = 0; k < n; ++k)
                o[k] = convert<T>(convert<A>(x[k]) * (bm_uniform_f32(w[k]) >= p ? scale : A(0)));
              return;
            }
            for (int64_t k = 0; k < n; ++k) {
              A m = bm_uniform_f32(w[k]) >= p ? scale : A(0);
              A x = convert<A>(*reinterpret_cast<const T*>(ptr[1] + k * st[1]));
              *reinterpret_cast<T*>(ptr[0] + k * st[0]) = convert<T>(x * m);
            }
          });
        }
      });
    }
  }
};

// out[..., :] = weight[idx[...], :]. The op layer has validated the indices; a bad one still
// cannot read out of bounds here (it gives a zero row).
template <typename T>
struct EmbeddingKernel {
  template <typename I>
  static void gather(const Tensor& idx, const Tensor& w, Tensor& out) {
    Tensor rows = out;  // the output's rows, shaped like the indices
    rows.shape.pop_back();
    rows.strides.pop_back();
    const int64_t dim = w.shape[1], n = w.shape[0], ws0 = w.strides[0], ws1 = w.strides[1], os = out.strides.back();
    const T* wb = w.data<T>();
    StridedPlan<2> plan({&rows, &idx});
    plan.run([&](std::array<char*, 2> ptr, std::array<int64_t, 2> st, int64_t cnt) {
      for (int64_t k = 0; k < cnt; ++k) {
        const int64_t r = int64_t(*reinterpret_cast<const I*>(ptr[1] + k * st[1]));
        T* o = reinterpret_cast<T*>(ptr[0] + k * st[0]);
        if (k + 1 < cnt && ws1 == 1) {  // the next row, prefetched while this one is copied
          const int64_t rn = int64_t(*reinterpret_cast<const I*>(ptr[1] + (k + 1) * st[1]));
          if (rn >= 0 && rn < n) prefetch_row(wb + rn * ws0, dim * int64_t(sizeof(T)));
        }
        if (r < 0 || r >= n) {
          for (int64_t j = 0; j < dim; ++j) o[j * os] = T(0);
          continue;
        }
        const T* src = wb + r * ws0;
        if (ws1 == 1 && os == 1) {
          std::memcpy(o, src, size_t(dim) * sizeof(T));
        } else {
          for (int64_t j = 0; j < dim; ++j) o[j * os] = src[j * ws1];
        }
      }
    }, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(dim, 1)));
  }

  static void run(const KernelCall& c) {
    const Tensor& idx = *c.in[0];
    if (idx.dtype == DType::Int32) gather<int32_t>(idx, *c.in[1], *c.out);
    else gather<int64_t>(idx, *c.in[1], *c.out);
  }
};

// out = -w[t] * input[class t at the target's position], 0 where t == ignore_index.
template <typename T>
struct NllLossKernel {
  static void run(const KernelCall& c) {
    if constexpr (kFloat<T>) {
      using A = acc_t<T>;
      const Tensor& input = *c.in[0];
      const Tensor* w = c.nin > 2 ? c.in[2] : nullptr;
      int64_t cs = 0;
      Tensor iv = nll_input_view(input, &cs);
      const int64_t ncls = input.shape[input.ndim() == 1 ? 0 : 1], ignore = c.args->ignore_index;
      const int64_t cs_bytes = cs * int64_t(sizeof(T));
      const T* wd = w ? w->data<T>() : nullptr;
      const int64_t wst = w ? w->strides[0] : 0;
      StridedPlan<3> plan({c.out, c.in[1], &iv});
      plan.run([&](std::array<char*, 3> ptr, std::array<int64_t, 3> st, int64_t n) {
        for (int64_t k = 0; k < n; ++k) {
          const int64_t t = *reinterpret_cast<const int64_t*>(ptr[1] + k * st[1]);
          A v = A(0);
          if (t != ignore && t >= 0 && t < ncls) {
            A wt = wd ? convert<A>(wd[t * wst]) : A(1);
            v = -(wt * convert<A>(*reinterpret_cast<const T*>(ptr[2] + k * st[2] + t * cs_bytes)));
          }
          *reinterpret_cast<T*>(ptr[0] + k * st[0]) = convert<T>(v);
        }
      });
    }
  }
};

// nll_loss's input gradient: out = 0, then at each target position -w[t] * grad at class t (not
// where t == ignore_index). Inputs: grad (target-shaped, any strides), int64 target, weight.
template <typename T>
struct NllLossBackwardKernel {
  static void run(const KernelCall& c) {
    if constexpr (kFloat<T>) {
      using A = acc_t<T>;
      Tensor& out = *c.out;
      const Tensor* w = c.nin > 2 ? c.in[2] : nullptr;
      StridedPlan<1>({&out}).run([](std::array<char*, 1> p, std::array<int64_t, 1> st, int64_t n) {
        for (int64_t k = 0; k < n; ++k) *reinterpret_cast<T*>(p[0] + k * st[0]) = T(0);
      });
      int64_t cs = 0;
      Tensor ov = nll_input_view(out, &cs);
      const int64_t ncls = out.shape[out.ndim() == 1 ? 0 : 1], ignore = c.args->ignore_index;
      const int64_t cs_bytes = cs * int64_t(sizeof(T));
      const T* wd = w ? w->data<T>() : nullptr;
      const int64_t wst = w ? w->strides[0] : 0;
      StridedPlan<3>({&ov, c.in[0], c.in[1]}).run([&](std::array<char*, 3> ptr, std::array<int64_t, 3> st, int64_t n) {
        for (int64_t k = 0; k < n; ++k) {
          const int64_t t = *reinterpret_cast<const int64_t*>(ptr[2] + k * st[2]);
          if (t == ignore || t < 0 || t >= ncls) continue;
          const A wt = wd ? convert<A>(wd[t * wst]) : A(1);
          const A g = convert<A>(*reinterpret_cast<const T*>(ptr[1] + k * st[1]));
          *reinterpret_cast<T*>(ptr[0] + k * st[0] + t * cs_bytes) = convert<T>(-(wt * g));
        }
      });
    }
  }
};

}  // namespace

void register_nn_misc_kernels(Backend& b) {
  register_for_row<NllLossBackwardKernel>(b, OpId::nll_loss_backward);
  register_for_row<DropoutKernel>(b, OpId::dropout);
  register_for_row<EmbeddingKernel>(b, OpId::embedding);
  register_for_row<NllLossKernel>(b, OpId::nll_loss);
}

}  // namespace bm::cpu
