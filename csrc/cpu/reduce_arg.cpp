// argmax / argmin: the index of the first extreme value, counting the reduced elements row-major
// in their logical order (so reduced dims are never reordered by stride). NaN counts as the
// maximum and as the minimum, as in torch: the first NaN wins.
#include <limits>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "cpu/kernels.h"
#include "cpu/reduce_engine.h"

namespace bm::cpu {

namespace {

template <typename T, bool kMax>
struct Arg {
  using V = std::conditional_t<std::is_same_v<T, bool>, bool, acc_t<T>>;
  struct Best { V v; int64_t i; };

  static V worst() {
    if constexpr (std::is_same_v<V, bool>) return !kMax;
    else if constexpr (std::is_floating_point_v<V>)
      return kMax ? -std::numeric_limits<V>::infinity() : std::numeric_limits<V>::infinity();
    else return kMax ? std::numeric_limits<V>::lowest() : std::numeric_limits<V>::max();
  }
  // x strictly better than b: only then does a later element replace an earlier one.
  static bool better(V x, V b) {
    bool r = kMax ? (x > b) : (x < b);
    if constexpr (std::is_floating_point_v<V>) r = r || (x != x && b == b);
    return r;
  }
  static V load(const char* p) { return V(*reinterpret_cast<const T*>(p)); }

  // Position of the first x[k] == v (v NaN: the first NaN); v is known to occur.
  static int64_t find_first(const V* x, int64_t n, V v) {
    const bool nan = v != v;
    int64_t k = 0;
    if constexpr (kLanes<V> > 1) {
      // four vectors per test: one branch per 64 bytes
      constexpr int L = kLanes<V>;
      const vec_t<V> vv = vsplat(v);
      auto hit = [&](int64_t i) {
        const vec_t<V> xv = vload<V>(x + i);
        return nan ? (xv != xv) : (xv == vv);
      };
      for (; k + 4 * L <= n; k += 4 * L)
        if (vany(hit(k) | hit(k + L) | hit(k + 2 * L) | hit(k + 3 * L))) break;
    }
    while (nan ? !(x[k] != x[k]) : !(x[k] == v)) ++k;
    return k;
  }

  // First best element of a run of n elements at byte stride st, numbered from i0.
  static Best run(const char* p, int64_t st, int64_t n, int64_t i0) {
    if constexpr (std::is_same_v<T, V>) {
      if (st == int64_t(sizeof(T))) {
        // Two vectorised passes: the extreme value (NaN wins), then its first position.
        const V* x = reinterpret_cast<const V*>(p);
        V v = tree_reduce_contig<V>(x, n, worst(), [](auto a, auto b) { return Extreme<kMax>::comb(a, b); });
        return {v, i0 + find_first(x, n, v)};
      }
    }
    Best b{load(p), i0};
    for (int64_t k = 1; k < n; ++k) {
      V x = load(p + k * st);
      if (better(x, b.v)) b = {x, i0 + k};
    }
    return b;
  }

  static void inner_mode(const ReducePlan& p) {
    const int64_t n = p.run_len(), st = p.red.back().in_st, runs = p.runs();
    const std::vector<RDim> outer = outer_red_dims(p);
    // Runs [rb, re) of the output whose input starts at base.
    auto partial = [&](const char* base, int64_t rb, int64_t re) {
      Odometer ro(outer);
      ro.seek(rb);
      Best b{worst(), rb * n};
      for (int64_t r = rb; r < re; ++r, ro.next()) {
        Best c = run(base + ro.in_off, st, n, r * n);
        if (better(c.v, b.v)) b = c;
      }
      return b;
    };
    const int nth = num_threads();
    const int64_t chunks = std::min<int64_t>({nth, runs, (p.n_red + kReduceGrain - 1) / kReduceGrain});
    if (p.n_out >= nth || chunks <= 1) {
      // One long run and few outputs: split the run itself.
      if (p.n_out < nth && runs == 1 && n >= 2 * kReduceGrain) {
        const int64_t pieces = nth;
        std::vector<Best> parts(static_cast<size_t>(pieces));
        Odometer ko(p.kept);
        for (int64_t m = 0; m < p.n_out; ++m, ko.next()) {
          parallel_for(0, pieces, 1, [&](int64_t b, int64_t e) {
            for (int64_t c = b; c < e; ++c) {
              const int64_t k0 = n * c / pieces, k1 = n * (c + 1) / pieces;
              parts[c] = run(p.in + ko.in_off + k0 * st, st, k1 - k0, k0);
            }
          });
          Best b = parts[0];
          for (int64_t c = 1; c < pieces; ++c)
            if (better(parts[c].v, b.v)) b = parts[c];
          *reinterpret_cast<int64_t*>(p.out + ko.out_off) = b.i;
        }
        return;
      }
      parallel_for(0, p.n_out, std::max<int64_t>(1, kReduceGrain / p.n_red), [&](int64_t b, int64_t e) {
        Odometer ko(p.kept);
        ko.seek(b);
        for (int64_t m = b; m < e; ++m, ko.next())
          *reinterpret_cast<int64_t*>(p.out + ko.out_off) = partial(p.in + ko.in_off, 0, runs).i;
      });
      return;
    }
    std::vector<Best> parts(static_cast<size_t>(chunks));
    Odometer ko(p.kept);
    for (int64_t m = 0; m < p.n_out; ++m, ko.next()) {
      parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c)
          parts[c] = partial(p.in + ko.in_off, runs * c / chunks, runs * (c + 1) / chunks);
      });
      Best b = parts[0];
      for (int64_t c = 1; c < chunks; ++c)
        if (better(parts[c].v, b.v)) b = parts[c];
      *reinterpret_cast<int64_t*>(p.out + ko.out_off) = b.i;
    }
  }

  // Rows (reduced index r, in logical order) are compared into a block of outputs.
  static void column_mode(const ReducePlan& p) {
    const RDim& ki = p.kept.back();
    const int64_t W = ki.size, MO = p.n_out / W, rows = p.n_red;
    const std::vector<RDim> okept = outer_kept_dims(p);
    const int64_t wb = std::min<int64_t>(W, 512), nblk = (W + wb - 1) / wb;
    parallel_for(0, MO * nblk, std::max<int64_t>(1, kReduceGrain / (rows * wb)), [&](int64_t b, int64_t e) {
      std::vector<V> best(static_cast<size_t>(wb));
      std::vector<int64_t> idx(static_cast<size_t>(wb));
      Odometer ko(okept), ro(p.red);
      for (int64_t it = b; it < e; ++it) {
        const int64_t mo = it / nblk, j0 = (it % nblk) * wb, w = std::min(wb, W - j0);
        ko.seek(mo);
        const char* in = p.in + ko.in_off + j0 * ki.in_st;
        std::fill(best.begin(), best.end(), worst());
        std::fill(idx.begin(), idx.end(), 0);
        ro.seek(0);
        for (int64_t r = 0; r < rows; ++r, ro.next()) {
          const char* row = in + ro.in_off;
          for (int64_t j = 0; j < w; ++j) {
            V x = load(row + j * ki.in_st);
            if (better(x, best[j])) {
              best[j] = x;
              idx[j] = r;
            }
          }
        }
        char* out = p.out + ko.out_off + j0 * ki.out_st;
        for (int64_t j = 0; j < w; ++j) *reinterpret_cast<int64_t*>(out + j * ki.out_st) = idx[j];
      }
    });
  }
};

template <typename T, bool kMax>
void arg_reduce(const KernelCall& c) {
  ReducePlan p(*c.in[0], *c.out, /*logical_red=*/true);
  if (p.column) Arg<T, kMax>::column_mode(p);
  else Arg<T, kMax>::inner_mode(p);
}

template <typename T>
struct ArgmaxKernel {
  static void run(const KernelCall& c) { arg_reduce<T, true>(c); }
};
template <typename T>
struct ArgminKernel {
  static void run(const KernelCall& c) { arg_reduce<T, false>(c); }
};

}  // namespace

void register_arg_reduce_kernels(Backend& b) {
  register_for_row<ArgmaxKernel>(b, OpId::argmax);
  register_for_row<ArgminKernel>(b, OpId::argmin);
}

}  // namespace bm::cpu
