// copy (strided copy with cast to the output dtype), fill and arange.
#include <cstring>

#include "core/ops.h"
#include "cpu/convert.h"
#include "cpu/half_convert.h"
#include "cpu/kernels.h"
#include "cpu/loops.h"

namespace bm::cpu {

namespace {

template <typename T>
struct CopyKernel {
  static void run(const KernelCall& c) {
    const Tensor& src = *c.in[0];
    Tensor& dst = *c.out;
    StridedPlan<2> plan({&dst, &src});
    visit_dtype(src.dtype, [&](auto sv) {
      using S = decltype(sv);
      plan.run([](std::array<char*, 2> p, std::array<int64_t, 2> st, int64_t n) {
        if (std::is_same_v<S, T> && st[0] == sizeof(T) && st[1] == sizeof(S)) {
          std::memcpy(p[0], p[1], size_t(n) * sizeof(T));
        } else if (st[0] == sizeof(T) && st[1] == sizeof(S)) {
          T* o = reinterpret_cast<T*>(p[0]);
          const S* i = reinterpret_cast<const S*>(p[1]);
          if (!convert_half_run(i, o, n))  // float32 <-> half types: vectorised, the same bits
            for (int64_t k = 0; k < n; ++k) o[k] = convert<T>(i[k]);
        } else {
          for (int64_t k = 0; k < n; ++k)
            *reinterpret_cast<T*>(p[0] + k * st[0]) = convert<T>(*reinterpret_cast<const S*>(p[1] + k * st[1]));
        }
      });
    });
  }
};

template <typename T>
struct FillKernel {
  static void run(const KernelCall& c) {
    T v = c.args->s0.to<T>();
    StridedPlan<1> plan({c.out});
    plan.run([v](std::array<char*, 1> p, std::array<int64_t, 1> st, int64_t n) {
      if (st[0] == sizeof(T)) {
        T* o = reinterpret_cast<T*>(p[0]);
        for (int64_t k = 0; k < n; ++k) o[k] = v;
      } else {
        for (int64_t k = 0; k < n; ++k) *reinterpret_cast<T*>(p[0] + k * st[0]) = v;
      }
    });
  }
};

template <typename T>
struct ArangeKernel {
  static void run(const KernelCall& c) {
    Tensor& out = *c.out;
    const Scalar& start = c.args->s0;
    const Scalar& step = c.args->s1;
    bool exact_int = start.kind != Scalar::Float && step.kind != Scalar::Float;
    T* o = out.data<T>();
    int64_t n = out.shape[0], s = out.strides[0];
    // Each element is start + i * step computed afresh (not accumulated), as torch does.
    for (int64_t i = 0; i < n; ++i) {
      if (exact_int) o[i * s] = convert<T>(start.i + i * step.i);
      else o[i * s] = convert<T>(start.f + double(i) * step.f);
    }
  }
};

}  // namespace

void register_copy_kernels(Backend& b) {
  register_for_row<CopyKernel>(b, OpId::copy);
  register_for_row<FillKernel>(b, OpId::fill);
  register_for_row<ArangeKernel>(b, OpId::arange);
}

}  // namespace bm::cpu
