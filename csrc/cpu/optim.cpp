// sgd_step and adam_step: one pass over a parameter and its state, the element formulas of
// shaders/optim_step.h (shared with shaders/optim.metal, so CPU and simulator give the same bits).
// Compiled with -ffp-contract=off (CMakeLists.txt): the AVX2 loops enable FMA, and a contracted
// a * b + c would round differently from torch and from the shaders; the formulas' own fma calls
// are correctly rounded at every width.
#include <array>
#include <type_traits>
#include <utility>

#include "core/ops_optim.h"
#include "cpu/convert.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"

namespace bm::cpu {

namespace {

template <typename T>
constexpr bool kFloat = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, half_t> ||
                        std::is_same_v<T, bfloat16_t>;

// ---- contiguous runs (vectorised for float once the flags are fixed, below) ----
// kBuf / kMax: whether the momentum buffer / max_exp_avg_sq exist (no stores to missing tensors).

template <typename T, bool kBuf>
inline void sgd_run(T* __restrict p, const T* __restrict g, T* __restrict buf, int64_t n,
                    BmOptimConsts<acc_t<T>> k, int flags) {
  using A = acc_t<T>;
  for (int64_t i = 0; i < n; ++i) {
    BmSgdResult<A> r = bm_sgd_element<A>(convert<A>(p[i]), convert<A>(g[i]), kBuf ? convert<A>(buf[i]) : A(0), k,
                                         flags);
    p[i] = convert<T>(r.param);
    if constexpr (kBuf) buf[i] = convert<T>(r.buf);
  }
}

template <typename T, bool kMax>
inline void adam_run(T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v, T* __restrict vmax,
                     int64_t n, BmOptimConsts<acc_t<T>> k, int flags) {
  using A = acc_t<T>;
  for (int64_t i = 0; i < n; ++i) {
    BmAdamResult<A> r = bm_adam_element<A>(convert<A>(p[i]), convert<A>(g[i]), convert<A>(m[i]), convert<A>(v[i]),
                                           kMax ? convert<A>(vmax[i]) : A(0), k, flags);
    p[i] = convert<T>(r.param);
    m[i] = convert<T>(r.exp_avg);
    v[i] = convert<T>(r.exp_avg_sq);
    if constexpr (kMax) vmax[i] = convert<T>(r.max_exp_avg_sq);
  }
}

// float with FMA: one loop per combination of flags, so every flag test folds away and the loop
// vectorises (a runtime flag leaves a branch in the loop, which stops the vectoriser). The flags
// that matter, packed into 5 bits: sgd: MAXIMIZE..FIRST_STEP are bits 0-4 already; adam:
// MAXIMIZE, WEIGHT_DECAY, AMSGRAD, DECOUPLED, LERP_SMALL.
constexpr int kSgdFlagMask = 31;
constexpr int adam_flag_index(int f) {
  return (f & 3) | (((f & BM_OPTIM_AMSGRAD) != 0) << 2) | (((f & BM_OPTIM_DECOUPLED) != 0) << 3) |
         (((f & BM_OPTIM_LERP_SMALL) != 0) << 4);
}
constexpr int adam_index_flags(int i) {
  return (i & 3) | ((i & 4) ? BM_OPTIM_AMSGRAD : 0) | ((i & 8) ? BM_OPTIM_DECOUPLED : 0) |
         ((i & 16) ? BM_OPTIM_LERP_SMALL : 0);
}

using SgdLoop = void (*)(float*, const float*, float*, int64_t, BmOptimConsts<float>);
using AdamLoop = void (*)(float*, const float*, float*, float*, float*, int64_t, BmOptimConsts<float>);

#if defined(__x86_64__) && defined(__GNUC__)
#define BM_OPTIM_FAST __attribute__((target("avx2,fma")))
#define BM_OPTIM_HAVE_FAST 1
#elif defined(__aarch64__)
#define BM_OPTIM_FAST
#define BM_OPTIM_HAVE_FAST 1
#endif

#ifdef BM_OPTIM_HAVE_FAST
template <int F>
BM_OPTIM_FAST void sgd_fixed(float* p, const float* g, float* buf, int64_t n, BmOptimConsts<float> k) {
  sgd_run<float, (F & BM_OPTIM_MOMENTUM) != 0>(p, g, buf, n, k, F);
}
template <int I>
BM_OPTIM_FAST void adam_fixed(float* p, const float* g, float* m, float* v, float* vmax, int64_t n,
                              BmOptimConsts<float> k) {
  constexpr int F = adam_index_flags(I);
  adam_run<float, (F & BM_OPTIM_AMSGRAD) != 0>(p, g, m, v, vmax, n, k, F);
}
template <int... I>
constexpr std::array<SgdLoop, sizeof...(I)> sgd_table(std::integer_sequence<int, I...>) {
  return {&sgd_fixed<I>...};
}
template <int... I>
constexpr std::array<AdamLoop, sizeof...(I)> adam_table(std::integer_sequence<int, I...>) {
  return {&adam_fixed<I>...};
}
constexpr auto kSgdLoops = sgd_table(std::make_integer_sequence<int, 32>{});
constexpr auto kAdamLoops = adam_table(std::make_integer_sequence<int, 32>{});

bool have_fast() {
#if defined(__x86_64__)
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
#else
  return true;
#endif
}
#endif

// The other types (and CPUs without FMA) run the loop with runtime flags: the same bits.
template <typename T, bool kBuf>
void sgd_contiguous(T* p, const T* g, T* buf, int64_t n, BmOptimConsts<acc_t<T>> k, int flags) {
#ifdef BM_OPTIM_HAVE_FAST
  if constexpr (std::is_same_v<T, float>) {
    if (have_fast()) return kSgdLoops[size_t(flags & kSgdFlagMask)](p, g, buf, n, k);
  }
#endif
  sgd_run<T, kBuf>(p, g, buf, n, k, flags);
}

template <typename T, bool kMax>
void adam_contiguous(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, BmOptimConsts<acc_t<T>> k, int flags) {
#ifdef BM_OPTIM_HAVE_FAST
  if constexpr (std::is_same_v<T, float>) {
    if (have_fast()) return kAdamLoops[size_t(adam_flag_index(flags))](p, g, m, v, vmax, n, k);
  }
#endif
  adam_run<T, kMax>(p, g, m, v, vmax, n, k, flags);
}

template <typename T>
T& at(char* base, int64_t stride, int64_t i) {
  return *reinterpret_cast<T*>(base + i * stride);
}

bool unit_strides(const int64_t* st, int n, int64_t size) {
  for (int i = 0; i < n; ++i)
    if (st[i] != size) return false;
  return true;
}

// out = param; in: grad[, momentum_buffer].
template <typename T>
struct SgdStepKernel {
  static void run(const KernelCall& c) {
    if constexpr (kFloat<T>) {
      using A = acc_t<T>;
      const BmOptimConsts<A> k = sgd_consts<A>(c.args->optim);
      const int flags = sgd_flags(c.args->optim);
      const bool has_buf = c.nin > 1;
      // Without a buffer the parameter stands in its slot; nothing reads or writes it there.
      StridedPlan<3> plan({c.out, c.in[0], has_buf ? c.in[1] : c.out});
      plan.run([&](std::array<char*, 3> ptr, std::array<int64_t, 3> st, int64_t n) {
        T* p = reinterpret_cast<T*>(ptr[0]);
        const T* g = reinterpret_cast<const T*>(ptr[1]);
        T* b = reinterpret_cast<T*>(ptr[2]);
        if (unit_strides(st.data(), 3, sizeof(T))) {
          if (has_buf) sgd_contiguous<T, true>(p, g, b, n, k, flags);
          else sgd_contiguous<T, false>(p, g, nullptr, n, k, flags);
          return;
        }
        for (int64_t i = 0; i < n; ++i) {
          T& pv = at<T>(ptr[0], st[0], i);
          A bv = has_buf ? convert<A>(at<T>(ptr[2], st[2], i)) : A(0);
          BmSgdResult<A> r = bm_sgd_element<A>(convert<A>(pv), convert<A>(at<T>(ptr[1], st[1], i)), bv, k, flags);
          pv = convert<T>(r.param);
          if (has_buf) at<T>(ptr[2], st[2], i) = convert<T>(r.buf);
        }
      });
    }
  }
};

// out = param; in: grad, exp_avg, exp_avg_sq[, max_exp_avg_sq].
template <typename T>
struct AdamStepKernel {
  static void run(const KernelCall& c) {
    if constexpr (kFloat<T>) {
      using A = acc_t<T>;
      const BmOptimConsts<A> k = adam_consts<A>(c.args->optim);
      const int flags = adam_flags<A>(c.args->optim);
      const bool has_max = c.nin > 3;
      StridedPlan<5> plan({c.out, c.in[0], c.in[1], c.in[2], has_max ? c.in[3] : c.out});
      plan.run([&](std::array<char*, 5> ptr, std::array<int64_t, 5> st, int64_t n) {
        T* p = reinterpret_cast<T*>(ptr[0]);
        const T* g = reinterpret_cast<const T*>(ptr[1]);
        T* m = reinterpret_cast<T*>(ptr[2]);
        T* v = reinterpret_cast<T*>(ptr[3]);
        T* vmax = reinterpret_cast<T*>(ptr[4]);
        if (unit_strides(st.data(), 5, sizeof(T))) {
          if (has_max) adam_contiguous<T, true>(p, g, m, v, vmax, n, k, flags);
          else adam_contiguous<T, false>(p, g, m, v, nullptr, n, k, flags);
          return;
        }
        for (int64_t i = 0; i < n; ++i) {
          T& pv = at<T>(ptr[0], st[0], i);
          T& mv = at<T>(ptr[2], st[2], i);
          T& vv = at<T>(ptr[3], st[3], i);
          A xv = has_max ? convert<A>(at<T>(ptr[4], st[4], i)) : A(0);
          BmAdamResult<A> r = bm_adam_element<A>(convert<A>(pv), convert<A>(at<T>(ptr[1], st[1], i)), convert<A>(mv),
                                                 convert<A>(vv), xv, k, flags);
          pv = convert<T>(r.param);
          mv = convert<T>(r.exp_avg);
          vv = convert<T>(r.exp_avg_sq);
          if (has_max) at<T>(ptr[4], st[4], i) = convert<T>(r.max_exp_avg_sq);
        }
      });
    }
  }
};

}  // namespace

void register_optim_kernels(Backend& b) {
  register_for_row<SgdStepKernel>(b, OpId::sgd_step);
  register_for_row<AdamStepKernel>(b, OpId::adam_step);
}

}  // namespace bm::cpu
