// The loops behind sum / mean / var / amax / amin (reduce.cpp). An op supplies
//   State                      accumulator (float for half types)
//   State identity() const     neutral element
//   static comb(a, b)          combine two partial states (associative up to rounding); a
//                              template when kPlainLoad, so it also combines vec_t<State> lanes
//   State load(T x, m) const   one element as a state; m = linear output index (var uses it)
//   kPlainLoad                 load is a plain conversion: contiguous runs may skip it and
//                              combine raw 16-byte vectors of T
//   void store(char* o, State s, m) const   write the result of output m
// and run_reduce() applies it to a ReducePlan, in inner or column mode, on every core.
//
// Accuracy: long sums are pairwise. Inside a run, tree_reduce() sums leaves of 256 elements into
// K accumulators (held in vector registers) and halves longer ranges recursively; runs and
// segments are combined by a Cascade (pairwise over a stream); column mode sums blocks of
// kRowBlock rows before adding them to the total. Error grows like log(n), not n.
//
// Speed: inner mode streams each run; column mode adds whole input rows into a block of output
// accumulators (numpy's order), both with software prefetch. Threads split the outputs, or the
// reduction itself (segments / rows, combined afterwards) when there are fewer outputs than threads.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "cpu/reduce_plan.h"
#include "cpu/reduce_rows.h"
#include "cpu/simd.h"

namespace bm::cpu {

constexpr int64_t kReduceGrain = 32768;  // elements per task before another thread helps
constexpr int64_t kSegment = 4096;       // inner mode: run pieces reduced as one unit
constexpr int64_t kRowBlock = 64;        // column mode: rows per block before joining the total
constexpr int64_t kColBlock = 65536;     // column mode: outputs handled together (at most)
// With fewer than kSplit outputs (or column blocks), each reduction is itself cut into up to kSplit
// pieces whose partial results are combined in order. The cut does not depend on the number of
// threads, so results are the same bit for bit whatever set_num_threads says.
constexpr int64_t kSplit = 8;
// Software prefetch distance for streaming loops. The hardware prefetcher alone leaves column-mode
// sums ~40% slower than a plain read of the same bytes; asking 16 KB ahead closes the gap.
constexpr int64_t kPrefetchBytes = 16384;

// Pairwise reduction of ld(i0) .. ld(i0 + n - 1): leaves of up to kLeaf elements go to K
// accumulators (element i to accumulator i % K), which are then combined as a binary tree.
// K = eight 16-byte vectors of S: enough independent chains to hide the latency of a
// compare-and-select max, few enough to stay in registers.
template <typename S>
constexpr int kTreeK = kLanes<S> > 1 ? (8 * kLanes<S> < 64 ? 8 * kLanes<S> : 64) : 16;
constexpr int64_t kLeaf = 256;

template <typename State, typename Ld, typename Comb>
State tree_reduce(const Ld& ld, int64_t i0, int64_t n, State id, const Comb& comb) {
  constexpr int K = kTreeK<State>;
  if (n > kLeaf) {
    // Left half first (named, since argument order is unspecified): memory is read forwards.
    const int64_t h = (n / 2) & ~int64_t(K - 1);
    const State left = tree_reduce(ld, i0, h, id, comb);
    return comb(left, tree_reduce(ld, i0 + h, n - h, id, comb));
  }
  State acc[K];
  for (int k = 0; k < K; ++k) acc[k] = id;
  int64_t i = 0;
  for (; i + K <= n; i += K)
    for (int k = 0; k < K; ++k) acc[k] = comb(acc[k], ld(i0 + i + k));
  for (int k = 0; i + k < n; ++k) acc[k] = comb(acc[k], ld(i0 + i + k));
  for (int w = K / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] = comb(acc[k], acc[k + w]);
  return acc[0];
}

// tree_reduce over a contiguous array of S, with the K accumulators held in 16-byte vectors. It
// combines in exactly the same order as tree_reduce (so contiguous and strided inputs agree);
// comb must accept both S and vec_t<S>.
template <typename S, typename Comb>
S tree_reduce_contig(const S* x, int64_t n, S id, const Comb& comb) {
  constexpr int K = kTreeK<S>, L = kLanes<S>;
  if constexpr (L == 1) {
    return tree_reduce<S>([x](int64_t i) { return x[i]; }, 0, n, id, comb);
  } else {
    if (n > kLeaf) {
      const int64_t h = (n / 2) & ~int64_t(K - 1);
      const S left = tree_reduce_contig(x, h, id, comb);
      return comb(left, tree_reduce_contig(x + h, n - h, id, comb));
    }
    constexpr int NV = K / L;
    using V = vec_t<S>;
    V acc[NV];
    for (int v = 0; v < NV; ++v) acc[v] = vsplat(id);
    int64_t i = 0;
    for (; i + K <= n; i += K) {
      for (int b = 0; b < K * int(sizeof(S)); b += 64)
        __builtin_prefetch(reinterpret_cast<const char*>(x + i) + b + kPrefetchBytes);
      for (int v = 0; v < NV; ++v) acc[v] = comb(acc[v], vload<S>(x + i + v * L));
    }
    if (i < n) {  // the tail, padded with the identity
      S tail[K];
      for (int k = 0; k < K; ++k) tail[k] = i + k < n ? x[i + k] : id;
      for (int v = 0; v < NV; ++v) acc[v] = comb(acc[v], vload<S>(tail + v * L));
    }
    for (int w = NV / 2; w >= 1; w /= 2)
      for (int v = 0; v < w; ++v) acc[v] = comb(acc[v], acc[v + w]);
    S s[L];
    vstore<S>(s, acc[0]);
    for (int w = L / 2; w >= 1; w /= 2)
      for (int k = 0; k < w; ++k) s[k] = comb(s[k], s[k + w]);
    return s[0];
  }
}

// Pairwise combination of a stream of partial states, like a binary counter: level k holds the
// combination of 2^k pushed states.
template <typename State, typename Comb>
struct Cascade {
  State level[64];
  uint64_t count = 0;
  const Comb& comb;
  explicit Cascade(const Comb& c) : comb(c) {}
  void push(State s) {
    int k = 0;
    for (uint64_t c = count; c & 1; c >>= 1, ++k) s = comb(level[k], s);
    level[k] = s;
    ++count;
  }
  // The occupied levels from the highest down (only the set bits of count are visited: a loop over
  // all 64 levels cost ~5% of a (4096, 4096) row sum, and most of a sum over short rows).
  State result(State id) const {
    if (count == 0) return id;
    int k = 63 - __builtin_clzll(count);
    State r = level[k];
    for (uint64_t rest = count & ~(uint64_t(1) << k); rest; rest &= ~(uint64_t(1) << k)) {
      k = 63 - __builtin_clzll(rest);
      r = comb(r, level[k]);
    }
    return r;
  }
};

// Ops whose load() is a plain conversion and whose State is a number can run on raw vectors of T.
template <typename T, typename Op>
constexpr bool kVectorOp = Op::kPlainLoad && (kLanes<typename Op::State> > 1) &&
                           sizeof(T) == sizeof(typename Op::State) &&
                           std::is_floating_point_v<T> == std::is_floating_point_v<typename Op::State>;

// Ops may name kExtremeF32 = 1 (float32 amax) or -1 (amin): their contiguous loops then run in
// reduce_rows.cpp, compiled per instruction set, in the same order as the generic loops.
template <typename Op, typename = void>
struct ExtremeF32 {
  static constexpr int value = 0;
};
template <typename Op>
struct ExtremeF32<Op, std::void_t<decltype(Op::kExtremeF32)>> {
  static constexpr int value = Op::kExtremeF32;
};

// Ops may name kSumF32 = true (float32 sum and mean, accumulated in float32): their contiguous runs
// then go to reduce_rows.cpp's copies of tree_reduce_contig, compiled per instruction set.
template <typename Op, typename = void>
struct SumF32 {
  static constexpr bool value = false;
};
template <typename Op>
struct SumF32<Op, std::void_t<decltype(Op::kSumF32)>> {
  static constexpr bool value = Op::kSumF32;
};

// One run of n elements at byte stride st, for output m.
template <typename T, typename Op>
typename Op::State reduce_run(const Op& op, const char* p, int64_t st, int64_t n, int64_t m) {
  using S = typename Op::State;
  auto comb = [](auto a, auto b) { return Op::comb(a, b); };
  if (st == int64_t(sizeof(T))) {
    if constexpr (ExtremeF32<Op>::value != 0) {
      return extreme_contig_f32(reinterpret_cast<const float*>(p), n, op.identity(), ExtremeF32<Op>::value > 0);
    } else if constexpr (SumF32<Op>::value) {
      return sum_contig_f32(reinterpret_cast<const float*>(p), n);
    } else if constexpr (kVectorOp<T, Op>) {
      // same-size integers (int64 summed as uint64) reinterpret exactly
      return tree_reduce_contig<S>(reinterpret_cast<const S*>(p), n, op.identity(), comb);
    } else {
      const T* x = reinterpret_cast<const T*>(p);
      return tree_reduce<S>([&](int64_t i) { return op.load(x[i], m); }, 0, n, op.identity(), comb);
    }
  }
  return tree_reduce<S>([&](int64_t i) { return op.load(*reinterpret_cast<const T*>(p + i * st), m); }, 0, n,
                        op.identity(), comb);
}

// acc[j] = comb(acc[j], x[j]) for one input row of w outputs (outputs m0 .. m0 + w - 1).
template <typename T, typename Op>
void reduce_cols(const Op& op, typename Op::State* acc, const char* p, int64_t st, int64_t w, int64_t m0) {
  using S = typename Op::State;
  int64_t j = 0;
  if (st == int64_t(sizeof(T))) {
    if constexpr (ExtremeF32<Op>::value != 0) {
      return extreme_cols_f32(acc, reinterpret_cast<const float*>(p), w, ExtremeF32<Op>::value > 0);
    } else if constexpr (kVectorOp<T, Op>) {
      constexpr int L = kLanes<S>;
      constexpr int64_t kLine = 64 / sizeof(S);  // elements per cache line
      for (; j + kLine <= w; j += kLine) {
        __builtin_prefetch(p + j * sizeof(T) + kPrefetchBytes);
        for (int64_t u = 0; u < kLine; u += L)
          vstore<S>(acc + j + u, Op::comb(vload<S>(acc + j + u), vload<S>(p + (j + u) * sizeof(T))));
      }
      for (; j + L <= w; j += L) vstore<S>(acc + j, Op::comb(vload<S>(acc + j), vload<S>(p + j * sizeof(T))));
    }
  }
  for (; j < w; ++j) acc[j] = Op::comb(acc[j], op.load(*reinterpret_cast<const T*>(p + j * st), m0 + j));
}

template <typename T, typename Op>
void reduce_inner_mode(const ReducePlan& p, const Op& op) {
  using S = typename Op::State;
  auto comb = [](S a, S b) { return Op::comb(a, b); };
  const int64_t n = p.run_len(), st = p.red.back().in_st;
  const int64_t per_run = (n + kSegment - 1) / kSegment, nseg = p.runs() * per_run;
  const std::vector<RDim> outer = outer_red_dims(p);
  // Segments [sb, se) of the output whose input starts at base.
  auto partial = [&](const char* base, int64_t m, int64_t sb, int64_t se) {
    // One segment (a run of at most kSegment): its reduction is the result, as the Cascade's would be.
    if (se - sb == 1 && per_run == 1 && outer.empty()) return reduce_run<T>(op, base, st, n, m);
    Odometer ro(outer);
    ro.seek(sb / per_run);
    int64_t piece = sb % per_run;
    Cascade<S, decltype(comb)> c(comb);
    for (int64_t s = sb; s < se; ++s) {
      const int64_t b = piece * kSegment;
      c.push(reduce_run<T>(op, base + ro.in_off + b * st, st, std::min(kSegment, n - b), m));
      if (++piece == per_run) {
        piece = 0;
        ro.next();
      }
    }
    return c.result(op.identity());
  };
  const int64_t chunks = std::min<int64_t>({kSplit, nseg, (p.n_red + kReduceGrain - 1) / kReduceGrain});
  // float32 sums and extremes of short contiguous rows, kShortRows at a time (reduce_rows.h).
  constexpr bool kShortOp = SumF32<Op>::value || ExtremeF32<Op>::value != 0;
  const bool short_rows = kShortOp && st == int64_t(sizeof(T)) && n >= 1 && n <= kShortMax && outer.empty();
  if (p.n_out >= kSplit || chunks <= 1) {  // one task per group of outputs
    parallel_for(0, p.n_out, std::max<int64_t>(1, kReduceGrain / p.n_red), [&](int64_t b, int64_t e) {
      Odometer ko(p.kept);
      ko.seek(b);
      int64_t m = b;
      if constexpr (kShortOp) {
        // One kept dim (the usual case after the plan merges dims): the rows' places by arithmetic, as
        // the Odometer's per-row update through memory cost more than the rows' sums.
        const bool one_dim = p.kept.size() == 1;
        for (; short_rows && m + kShortRows <= e;) {
          const float* rows[kShortRows];
          int64_t outs[kShortRows];
          if (one_dim) {
            const RDim& d = p.kept[0];
            for (int r = 0; r < kShortRows; ++r)
              rows[r] = reinterpret_cast<const float*>(p.in + (m + r) * d.in_st), outs[r] = (m + r) * d.out_st;
          } else {
            for (int r = 0; r < kShortRows; ++r, ko.next())
              rows[r] = reinterpret_cast<const float*>(p.in + ko.in_off), outs[r] = ko.out_off;
          }
          float res[kShortRows];
          if constexpr (SumF32<Op>::value) sum_short_rows_f32(rows, n, res);
          else extreme_short_rows_f32(rows, n, float(op.identity()), ExtremeF32<Op>::value > 0, res);
          for (int r = 0; r < kShortRows; ++r, ++m) op.store(p.out + outs[r], typename Op::State(res[r]), m);
        }
        if (one_dim) ko.seek(m);
      }
      for (; m < e; ++m, ko.next()) op.store(p.out + ko.out_off, partial(p.in + ko.in_off, m, 0, nseg), m);
    });
    return;
  }
  // Few outputs, long reductions: split each output's segments into pieces for the threads.
  Odometer ko(p.kept);
  std::vector<S> parts(static_cast<size_t>(chunks), op.identity());
  for (int64_t m = 0; m < p.n_out; ++m, ko.next()) {
    parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c)
        parts[c] = partial(p.in + ko.in_off, m, nseg * c / chunks, nseg * (c + 1) / chunks);
    });
    S r = parts[0];
    for (int64_t c = 1; c < chunks; ++c) r = Op::comb(r, parts[c]);
    op.store(p.out + ko.out_off, r, m);
  }
}

template <typename T, typename Op>
void reduce_column_mode(const ReducePlan& p, const Op& op) {
  using S = typename Op::State;
  const RDim& ki = p.kept.back();
  const int64_t W = ki.size, MO = p.n_out / W, rows = p.n_red;
  const std::vector<RDim> okept = outer_kept_dims(p);
  // Whole rows when they fit (blocks only for very wide outputs): streaming rows end to end is
  // several times faster than walking the matrix in column strips. With fewer than kSplit output
  // blocks the rows are cut into pieces too, each summed into its own partial outputs.
  const int64_t wb = std::min(W, kColBlock);
  const int64_t nblk = (W + wb - 1) / wb, items = MO * nblk;
  int64_t row_chunks = 1;
  if (items < kSplit && rows > 1 && rows * wb >= 2 * kReduceGrain) row_chunks = std::min<int64_t>(kSplit, rows);

  // Accumulates rows [r0, r1) of item (mo, jb) into tot[0 .. w).
  auto accumulate = [&](const char* base, int64_t w, int64_t m0, int64_t r0, int64_t r1, S* tot) {
    std::vector<S> blk(static_cast<size_t>(w));
    std::fill(tot, tot + w, op.identity());
    Odometer ro(p.red);
    ro.seek(r0);
    for (int64_t r = r0; r < r1;) {
      const int64_t re = std::min(r1, r + kRowBlock);
      std::fill(blk.begin(), blk.end(), op.identity());
      for (; r < re; ++r, ro.next()) reduce_cols<T>(op, blk.data(), base + ro.in_off, ki.in_st, w, m0);
      for (int64_t j = 0; j < w; ++j) tot[j] = Op::comb(tot[j], blk[j]);
    }
  };
  struct Item { const char* in; char* out; int64_t w, m0; };
  auto item = [&](int64_t it) {
    const int64_t mo = it / nblk, jb = it % nblk;
    Odometer ko(okept);
    ko.seek(mo);
    const int64_t j0 = jb * wb;
    return Item{p.in + ko.in_off + j0 * ki.in_st, p.out + ko.out_off + j0 * ki.out_st, std::min(wb, W - j0),
                mo * W + j0};
  };
  auto store = [&](const Item& t, const S* tot) {
    for (int64_t j = 0; j < t.w; ++j) op.store(t.out + j * ki.out_st, tot[j], t.m0 + j);
  };
  if (row_chunks == 1) {
    parallel_for(0, items, 1, [&](int64_t b, int64_t e) {
      std::vector<S> tot(static_cast<size_t>(wb));
      for (int64_t it = b; it < e; ++it) {
        Item t = item(it);
        accumulate(t.in, t.w, t.m0, 0, rows, tot.data());
        store(t, tot.data());
      }
    });
    return;
  }
  std::vector<std::vector<S>> parts(static_cast<size_t>(row_chunks), std::vector<S>(static_cast<size_t>(wb)));
  for (int64_t it = 0; it < items; ++it) {
    Item t = item(it);
    parallel_for(0, row_chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c)
        accumulate(t.in, t.w, t.m0, rows * c / row_chunks, rows * (c + 1) / row_chunks, parts[c].data());
    });
    for (int64_t c = 1; c < row_chunks; ++c)
      for (int64_t j = 0; j < t.w; ++j) parts[0][j] = Op::comb(parts[0][j], parts[c][j]);
    store(t, parts[0].data());
  }
}

template <typename T, typename Op>
void run_reduce(const ReducePlan& p, const Op& op) {
  if (p.column) reduce_column_mode<T>(p, op);
  else reduce_inner_mode<T>(p, op);
}

}  // namespace bm::cpu
