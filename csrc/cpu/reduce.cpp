// sum prod mean var amax amin any all: the ops plug into the loops of reduce_engine.h.
//
// The dispatcher has already cast bool/int sums to int64 and rejected non-float mean/var, but every
// kernel template is instantiated for all seven dtypes, so the ops compile for each of them.
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu/kernels.h"
#include "cpu/reduce_engine.h"

namespace bm::cpu {

namespace {

template <typename T>
constexpr bool kFloating = std::is_floating_point_v<acc_t<T>>;
// Sums: float types in acc_t (float32 for half types); integers wrap around in uint64 like torch's
// int64 sums (unsigned, so overflow is defined).
template <typename T>
using sum_acc_t = std::conditional_t<kFloating<T>, acc_t<T>, uint64_t>;
// mean / var accumulate in acc_t for float types (double for the integer instantiations).
template <typename T>
using float_acc_t = std::conditional_t<kFloating<T>, acc_t<T>, double>;

template <typename T, typename A>
void put(char* o, A v) {
  if constexpr (std::is_same_v<T, bool>) *reinterpret_cast<T*>(o) = v != A(0);
  else if constexpr (std::is_integral_v<A>) *reinterpret_cast<T*>(o) = T(int64_t(v));
  else *reinterpret_cast<T*>(o) = T(v);
}

template <typename T>
struct SumOp {
  using State = sum_acc_t<T>;
  static constexpr bool kPlainLoad = true;
  static constexpr bool kSumF32 = std::is_same_v<T, float> && std::is_same_v<State, float>;  // reduce_rows.cpp
  State identity() const { return State(0); }
  template <typename V>
  static V comb(V a, V b) { return a + b; }
  State load(T x, int64_t) const { return State(x); }
  void store(char* o, State s, int64_t) const { put<T>(o, s); }
};

// prod: the sum's accumulator types (integers wrap in uint64 as torch's int64 products do).
template <typename T>
struct ProdOp {
  using State = sum_acc_t<T>;
  static constexpr bool kPlainLoad = true;
  State identity() const { return State(1); }
  template <typename V>
  static V comb(V a, V b) { return a * b; }
  State load(T x, int64_t) const { return State(x); }
  void store(char* o, State s, int64_t) const { put<T>(o, s); }
};

template <typename T>
struct MeanOp {
  using State = float_acc_t<T>;
  static constexpr bool kPlainLoad = true;
  static constexpr bool kSumF32 = std::is_same_v<T, float> && std::is_same_v<State, float>;
  State n;  // elements per output
  State identity() const { return State(0); }
  template <typename V>
  static V comb(V a, V b) { return a + b; }
  State load(T x, int64_t) const { return State(x); }
  void store(char* o, State s, int64_t) const { put<T>(o, s / n); }
};

// var, first pass: the mean of every output into mu[m].
template <typename T>
struct MeanIntoOp : MeanOp<T> {
  typename MeanOp<T>::State* mu;
  void store(char*, typename MeanOp<T>::State s, int64_t m) const { mu[m] = s / this->n; }
};

// var, second pass: sums of d = x - mu and d^2. The variance is (sum d^2 - (sum d)^2 / N) / (N - c):
// the second term removes the error of the mean from the first pass ("corrected two-pass"), so
// data with a large mean keeps full accuracy.
template <typename T>
struct VarOp {
  using A = float_acc_t<T>;
  struct State { A s1, s2; };
  static constexpr bool kPlainLoad = false;
  const A* mu;
  A n;
  double correction;
  State identity() const { return {A(0), A(0)}; }
  static State comb(State a, State b) { return {a.s1 + b.s1, a.s2 + b.s2}; }
  State load(T x, int64_t m) const {
    A d = A(x) - mu[m];
    return {d, d * d};
  }
  void store(char* o, State s, int64_t) const {
    A m2 = s.s2 - s.s1 * s.s1 / n;
    if (m2 < A(0)) m2 = A(0);
    // As torch: divide by max(N - correction, 0); N <= correction gives inf (or nan when m2 == 0).
    A denom = A(std::max(double(n) - correction, 0.0));
    put<T>(o, m2 / denom);
  }
};

// amax / amin: NaN wins, as in torch.
template <typename T, bool kMax>
struct ExtremumOp : Extreme<kMax> {
  // bool compares as uint8 (std::vector<bool> has no data() for the column buffers)
  using State = std::conditional_t<std::is_same_v<T, bool>, uint8_t, acc_t<T>>;
  static constexpr bool kPlainLoad = true;
  static constexpr int kExtremeF32 = std::is_same_v<T, float> ? (kMax ? 1 : -1) : 0;  // reduce_rows.cpp
  State identity() const {
    if constexpr (std::is_same_v<T, bool>) return kMax ? 0 : 1;
    else if constexpr (std::is_floating_point_v<State>)
      return kMax ? -std::numeric_limits<State>::infinity() : std::numeric_limits<State>::infinity();
    else return kMax ? std::numeric_limits<State>::lowest() : std::numeric_limits<State>::max();
  }
  State load(T x, int64_t) const { return State(x); }
  void store(char* o, State s, int64_t) const { put<T>(o, s); }
};

// any / all: a 0/1 state; NaN counts as true (x != 0). The output is bool whatever the input.
template <typename T, bool kAll>
struct AnyAllOp {
  using State = uint8_t;
  static constexpr bool kPlainLoad = false;
  State identity() const { return kAll ? 1 : 0; }
  template <typename V>
  static V comb(V a, V b) { return kAll ? V(a & b) : V(a | b); }
  State load(T x, int64_t) const { return static_cast<acc_t<T>>(x) != acc_t<T>(0) ? 1 : 0; }
  void store(char* o, State s, int64_t) const { *reinterpret_cast<bool*>(o) = s != 0; }
};

template <typename T>
struct AnyKernel {
  static void run(const KernelCall& c) { run_reduce<T>(ReducePlan(*c.in[0], *c.out), AnyAllOp<T, false>{}); }
};

template <typename T>
struct AllKernel {
  static void run(const KernelCall& c) { run_reduce<T>(ReducePlan(*c.in[0], *c.out), AnyAllOp<T, true>{}); }
};

template <typename T>
struct SumKernel {
  static void run(const KernelCall& c) { run_reduce<T>(ReducePlan(*c.in[0], *c.out), SumOp<T>{}); }
};

template <typename T>
struct ProdKernel {
  static void run(const KernelCall& c) { run_reduce<T>(ReducePlan(*c.in[0], *c.out), ProdOp<T>{}); }
};

template <typename T>
struct MeanKernel {
  static void run(const KernelCall& c) {
    ReducePlan p(*c.in[0], *c.out);
    run_reduce<T>(p, MeanOp<T>{float_acc_t<T>(p.n_red)});
  }
};

template <typename T>
struct VarKernel {
  static void run(const KernelCall& c) {
    using A = float_acc_t<T>;
    ReducePlan p(*c.in[0], *c.out);
    std::vector<A> mu(static_cast<size_t>(p.n_out));
    MeanIntoOp<T> mean_op;
    mean_op.n = A(p.n_red);
    mean_op.mu = mu.data();
    run_reduce<T>(p, mean_op);
    run_reduce<T>(p, VarOp<T>{mu.data(), A(p.n_red), c.args->correction});
  }
};

template <typename T>
struct AmaxKernel {
  static void run(const KernelCall& c) { run_reduce<T>(ReducePlan(*c.in[0], *c.out), ExtremumOp<T, true>{}); }
};

template <typename T>
struct AminKernel {
  static void run(const KernelCall& c) { run_reduce<T>(ReducePlan(*c.in[0], *c.out), ExtremumOp<T, false>{}); }
};

}  // namespace

void register_reduce_kernels(Backend& b) {
  register_for_row<SumKernel>(b, OpId::sum);
  register_for_row<MeanKernel>(b, OpId::mean);
  register_for_row<VarKernel>(b, OpId::var);
  register_for_row<AmaxKernel>(b, OpId::amax);
  register_for_row<AminKernel>(b, OpId::amin);
  register_for_row<AnyKernel>(b, OpId::any);
  register_for_row<AllKernel>(b, OpId::all);
  register_for_row<ProdKernel>(b, OpId::prod);
}

}  // namespace bm::cpu
