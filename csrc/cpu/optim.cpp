// sgd_step and adam_step: one pass over a parameter and its state, the element formulas of
// shaders/optim_step.h (shared with shaders/optim.metal, so CPU and simulator give the same bits).
// Compiled with -ffp-contract=off (CMakeLists.txt): the AVX2/AVX-512 loops enable FMA, and a
// contracted a * b + c would round differently from torch and from the shaders; the formulas' own
// fma calls are correctly rounded at every width.
#include <array>
#include <type_traits>

#include "core/ops_optim.h"
#include "cpu/convert.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"

namespace bm::cpu {

namespace {

template <typename T>
constexpr bool kFloat = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, half_t> ||
                        std::is_same_v<T, bfloat16_t>;

// ---- contiguous runs: loops the compiler vectorises (float, double) ----
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

#if defined(__x86_64__) && defined(__GNUC__)
#define BM_OPTIM_ISA_LOOPS(ATTR, SUFFIX)                                                                        \
  template <typename T, bool kBuf>                                                                              \
  ATTR void sgd_run_##SUFFIX(T* p, const T* g, T* buf, int64_t n, BmOptimConsts<acc_t<T>> k, int flags) {       \
    sgd_run<T, kBuf>(p, g, buf, n, k, flags);                                                                   \
  }                                                                                                             \
  template <typename T, bool kMax>                                                                              \
  ATTR void adam_run_##SUFFIX(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, BmOptimConsts<acc_t<T>> k,     \
                              int flags) {                                                                      \
    adam_run<T, kMax>(p, g, m, v, vmax, n, k, flags);                                                           \
  }
BM_OPTIM_ISA_LOOPS(__attribute__((target("avx2,fma"))), avx2)
BM_OPTIM_ISA_LOOPS(__attribute__((target("avx512f,fma,prefer-vector-width=512"))), avx512)
#undef BM_OPTIM_ISA_LOOPS

int isa_level() {
  static const int level = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma") ? 2
                           : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
  return level;
}
#endif

// float and double take the widest loop the CPU has; the half types the baseline loop (their
// conversions dominate). Every version computes the same bits.
template <typename T, bool kBuf>
void sgd_contiguous(T* p, const T* g, T* buf, int64_t n, BmOptimConsts<acc_t<T>> k, int flags) {
#if defined(__x86_64__) && defined(__GNUC__)
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (isa_level() == 2) return sgd_run_avx512<T, kBuf>(p, g, buf, n, k, flags);
    if (isa_level() == 1) return sgd_run_avx2<T, kBuf>(p, g, buf, n, k, flags);
  }
#endif
  sgd_run<T, kBuf>(p, g, buf, n, k, flags);
}

template <typename T, bool kMax>
void adam_contiguous(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, BmOptimConsts<acc_t<T>> k, int flags) {
#if defined(__x86_64__) && defined(__GNUC__)
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (isa_level() == 2) return adam_run_avx512<T, kMax>(p, g, m, v, vmax, n, k, flags);
    if (isa_level() == 1) return adam_run_avx2<T, kMax>(p, g, m, v, vmax, n, k, flags);
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
