// Reductions over any set of dims: sum prod mean amax amin argmax argmin (one Op struct each) and var.
//
// Kernel shapes, chosen by the host (csrc/metal/ops_reduce.cpp):
//   reduce_*_thread   one thread per output element looping over its reduced elements: for short
//                     reductions, and for "column" reductions where neighbouring outputs are
//                     neighbours in memory (threads then read adjacent addresses);
//   reduce_*_group    one threadgroup per output element; its threads stride over the reduced
//                     elements, then a simd + threadgroup tree (simd_reduce.h) combines them;
//   reduce_*_partial  long reductions with few outputs: several threadgroups per output, each
//   + reduce_*_merge  reducing one chunk into a partial state; then one thread per output
//                     combines its partials, so the whole GPU works on e.g. a full sum.
//   reduce_*_column   long column reductions: several threads per output, each reducing one
//   + reduce_*_merge  chunk of rows (neighbouring threads still read neighbouring columns), so a
//                     (16384, 16384) sum over dim 0 runs 16 times as many threads as outputs.
// Half types accumulate in float; integer sums in long. Reduced elements are numbered row-major
// in the reduced dims' logical order, which is what argmax/argmin report.
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs.h"
using namespace metal;
#include "simd_reduce.h"  // after the using: its helpers call metal:: functions

// ---------- indexing ----------

// Input and output offsets of output element m (row-major over the kept dims).
inline void kept_offsets(constant ReduceArgs& a, long m, thread long& in_off, thread long& out_off) {
  in_off = a.in_offset;
  out_off = a.out_offset;
  for (int d = a.kept_ndim - 1; d >= 0; --d) {
    long i = m % a.kept_shape[d];
    m /= a.kept_shape[d];
    in_off += i * a.kept_in_strides[d];
    out_off += i * a.kept_out_strides[d];
  }
}

// Input offset (relative to the output's base) of reduced index j over the first `nd` reduced dims.
inline long red_offset(constant ReduceArgs& a, long j, int nd) {
  long off = 0;
  for (int d = nd - 1; d >= 0; --d) {
    off += (j % a.red_shape[d]) * a.red_strides[d];
    j /= a.red_shape[d];
  }
  return off;
}

// ---------- ops: S state, identity, load (element j), combine, simd_reduce (all lanes), store ----------

template <typename T>
struct SumOp {
  typedef T In;
  typedef T Out;
  typedef conditional_t<is_floating_point_v<T>, float, long> S;
  static S identity() { return S(0); }
  static S load(T x, long) { return S(x); }
  static S combine(S a, S b) { return wrap_add(a, b); }
  static S simd_reduce(S v) { return simd_all_sum(v); }
  static void store(device Out* out, long at, S s, constant ReduceArgs&) { out[at] = Out(s); }
};

// prod: the sum's state types; the simd tree multiplies lanes pairwise (commutative, so every lane
// ends with the same bits).
template <typename T>
struct ProdOp : SumOp<T> {
  typedef typename SumOp<T>::S S;
  static S identity() { return S(1); }
  static S combine(S a, S b) { return wrap_mul(a, b); }
  static S simd_reduce(S v) {
    for (ushort m = BM_SIMD_WIDTH / 2; m > 0; m >>= 1) v = wrap_mul(v, simd_xor_shuffle(v, m));
    return v;
  }
};

template <typename T>
struct MeanOp : SumOp<T> {
  typedef float S;
  static void store(device T* out, long at, S s, constant ReduceArgs& a) { out[at] = T(s / float(a.n_red)); }
};

// amax / amin: NaN wins. bool and int32 compare as int, int64 as long, floats as float.
template <typename T, bool kMax>
struct ExtremeOp {
  typedef T In;
  typedef T Out;
  typedef conditional_t<is_floating_point_v<T>, float, conditional_t<is_same_v<T, long>, long, int>> S;
  static S identity() {  // the worst value: every element beats or ties it
    if (is_floating_point_v<T>) return kMax ? S(-INFINITY) : S(INFINITY);
    if (is_same_v<T, long>) return kMax ? S(-0x7fffffffffffffff - 1) : S(0x7fffffffffffffff);
    return kMax ? S(INT_MIN) : S(INT_MAX);
  }
  static S load(T x, long) { return S(x); }
  static S combine(S a, S b) { return (a != a || (kMax ? a > b : a < b)) ? a : b; }
  static S simd_reduce(S v) { return kMax ? simd_all_max(v) : simd_all_min(v); }
  static void store(device Out* out, long at, S s, constant ReduceArgs&) { out[at] = Out(s); }
};

// argmax / argmin: (value, index) pairs. The better value wins, NaN counting as better than any
// number (torch); equal values (and two NaNs) keep the smaller index, so the first extreme wins
// whatever order the tree combines in.
template <typename V>
struct ArgState {
  V v;
  long i;
};

template <typename T, bool kMax>
struct ArgOp {
  typedef T In;
  typedef long Out;
  typedef conditional_t<is_floating_point_v<T>, float, conditional_t<is_same_v<T, long>, long, int>> V;
  typedef ArgState<V> S;
  static S identity() { return S{ExtremeOp<T, kMax>::identity(), 0x7fffffffffffffff}; }  // worst value, last index
  static S load(T x, long j) { return S{V(x), j}; }
  static bool better(V x, V y) { return (kMax ? x > y : x < y) || (x != x && y == y); }
  static S combine(S a, S b) { return better(b.v, a.v) || (!better(a.v, b.v) && b.i < a.i) ? b : a; }
  static S simd_reduce(S s) {
    for (ushort m = BM_SIMD_WIDTH / 2; m > 0; m >>= 1)
      s = combine(s, S{simd_xor_shuffle(s.v, m), simd_xor_shuffle(s.i, m)});
    return s;
  }
  static void store(device Out* out, long at, S s, constant ReduceArgs&) { out[at] = s.i; }
};

// any / all: a 0/1 int state, bool output whatever the input dtype; NaN counts as true (x != 0).
inline int bm_truth(bool x) { return x ? 1 : 0; }
inline int bm_truth(int x) { return x != 0 ? 1 : 0; }
inline int bm_truth(long x) { return x != 0 ? 1 : 0; }
inline int bm_truth(half x) { return float(x) != 0.0f ? 1 : 0; }
inline int bm_truth(bfloat x) { return float(x) != 0.0f ? 1 : 0; }
inline int bm_truth(float x) { return x != 0.0f ? 1 : 0; }

template <typename T, bool kAll>
struct AnyAllOp {
  typedef T In;
  typedef bool Out;
  typedef int S;
  static S identity() { return kAll ? 1 : 0; }
  static S load(T x, long) { return bm_truth(x); }
  static S combine(S a, S b) { return kAll ? (a & b) : (a | b); }
  static S simd_reduce(S v) { return kAll ? simd_all_min(v) : simd_all_max(v); }
  static void store(device Out* out, long at, S s, constant ReduceArgs&) { out[at] = s != 0; }
};

// ---------- kernels ----------

// This thread's share of reduced elements [j0, j1): j0 + lid, j0 + lid + tsize, ...
template <typename Op>
inline typename Op::S accumulate_strided(device const typename Op::In* in, constant ReduceArgs& a, long base, long j0,
                                         long j1, uint lid, uint tsize) {
  typename Op::S s = Op::identity();
  if (a.red_ndim == 1) {  // one reduced dim (contiguous when its stride is 1): no index math
    const long st = a.red_strides[0];
    for (long j = j0 + lid; j < j1; j += tsize) s = Op::combine(s, Op::load(in[base + j * st], j));
  } else {
    for (long j = j0 + lid; j < j1; j += tsize)
      s = Op::combine(s, Op::load(in[base + red_offset(a, j, a.red_ndim)], j));
  }
  return s;
}

// One threadgroup per output element.
template <typename Op>
kernel void reduce_group(device const typename Op::In* in [[buffer(0)]],
                         device typename Op::Out* out [[buffer(1)]],
                         constant ReduceArgs& a [[buffer(2)]],
                         uint group [[threadgroup_position_in_grid]],
                         uint lid [[thread_index_in_threadgroup]],
                         uint tsize [[threads_per_threadgroup]],
                         uint lane [[thread_index_in_simdgroup]],
                         uint sg [[simdgroup_index_in_threadgroup]],
                         uint nsg [[simdgroups_per_threadgroup]]) {
  threadgroup typename Op::S scratch[BM_SIMD_WIDTH];
  long base, at;
  kept_offsets(a, group, base, at);
  typename Op::S s = accumulate_strided<Op>(in, a, base, 0, a.n_red, lid, tsize);
  s = block_all_reduce<Op>(s, scratch, lane, sg, nsg);
  if (lid == 0) Op::store(out, at, s, a);
}

// Long reductions with few outputs are split: n_split threadgroups per output each reduce one
// chunk of a.chunk elements into partial[group] (group = output * n_split + chunk), then
// reduce_merge combines each output's partials in chunk order.
template <typename Op>
kernel void reduce_partial(device const typename Op::In* in [[buffer(0)]],
                           device typename Op::S* partial [[buffer(1)]],
                           constant ReduceArgs& a [[buffer(2)]],
                           uint group [[threadgroup_position_in_grid]],
                           uint lid [[thread_index_in_threadgroup]],
                           uint tsize [[threads_per_threadgroup]],
                           uint lane [[thread_index_in_simdgroup]],
                           uint sg [[simdgroup_index_in_threadgroup]],
                           uint nsg [[simdgroups_per_threadgroup]]) {
  threadgroup typename Op::S scratch[BM_SIMD_WIDTH];
  long base, at;
  kept_offsets(a, group / a.n_split, base, at);
  const long j0 = (group % a.n_split) * a.chunk, j1 = j0 + a.chunk < a.n_red ? j0 + a.chunk : a.n_red;
  typename Op::S s = accumulate_strided<Op>(in, a, base, j0, j1, lid, tsize);
  s = block_all_reduce<Op>(s, scratch, lane, sg, nsg);
  if (lid == 0) partial[group] = s;
}

template <typename Op>
kernel void reduce_merge(device const typename Op::S* partial [[buffer(0)]],
                         device typename Op::Out* out [[buffer(1)]],
                         constant ReduceArgs& a [[buffer(2)]],
                         uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_out) return;
  long base, at;
  kept_offsets(a, gid, base, at);
  typename Op::S s = partial[long(gid) * a.n_split];
  for (int c = 1; c < a.n_split; ++c) s = Op::combine(s, partial[long(gid) * a.n_split + c]);
  Op::store(out, at, s, a);
}

// Serial loop over the reduced elements: the innermost reduced dim runs without index math.
template <typename Op>
inline typename Op::S reduce_serial(device const typename Op::In* in, constant ReduceArgs& a, long base) {
  const int last = a.red_ndim - 1;
  const long inner = a.red_shape[last], st = a.red_strides[last];
  typename Op::S s = Op::identity();
  for (long j0 = 0; j0 < a.n_red; j0 += inner) {
    const long row = base + red_offset(a, j0 / inner, last);
    for (long k = 0; k < inner; ++k) s = Op::combine(s, Op::load(in[row + k * st], j0 + k));
  }
  return s;
}

// One thread per output element.
template <typename Op>
kernel void reduce_thread(device const typename Op::In* in [[buffer(0)]],
                          device typename Op::Out* out [[buffer(1)]],
                          constant ReduceArgs& a [[buffer(2)]],
                          uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_out) return;
  long base, at;
  kept_offsets(a, gid, base, at);
  Op::store(out, at, reduce_serial<Op>(in, a, base), a);
}

// Column reductions split over a.n_split chunks of rows: thread gid reduces chunk gid / n_out of
// output gid % n_out into partial[output * n_split + chunk], the layout reduce_merge combines.
template <typename Op>
kernel void reduce_column(device const typename Op::In* in [[buffer(0)]],
                          device typename Op::S* partial [[buffer(1)]],
                          constant ReduceArgs& a [[buffer(2)]],
                          uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_out * a.n_split) return;
  const long m = long(gid) % a.n_out, c = long(gid) / a.n_out;
  long base, at;
  kept_offsets(a, m, base, at);
  const long j0 = c * a.chunk, j1 = j0 + a.chunk < a.n_red ? j0 + a.chunk : a.n_red;
  typename Op::S s = Op::identity();
  if (a.red_ndim == 1) {
    const long st = a.red_strides[0];
    for (long j = j0; j < j1; ++j) s = Op::combine(s, Op::load(in[base + j * st], j));
  } else {
    for (long j = j0; j < j1; ++j) s = Op::combine(s, Op::load(in[base + red_offset(a, j, a.red_ndim)], j));
  }
  partial[m * a.n_split + c] = s;
}

// ---------- var ----------
// Statistics of a set of elements as float4(count, mean_hi, mean_lo, M2) with the mean held as
// hi + lo (hi: the first-pass mean, lo: its small correction), from two passes: the mean, then
// sums of d = x - mean and d^2; M2 = sum d^2 - (sum d)^2 / n removes the rounding error of the
// mean, so data with a large mean keeps full accuracy. Split reductions combine chunk statistics
// with Chan's formula; the mean difference it needs is (hi_b - hi_a) + (lo_b - lo_a), exact
// enough even when the means are ~1e6 and differ by 0.01 (a float mean alone would be off by its
// rounding, ~0.03 there). var = M2 / max(N - correction, 0): N <= correction gives inf, or nan
// when M2 == 0, as in torch.

inline float4 var_stats(float n, float mean, float2 d) {
  float m2 = d.y - d.x * d.x / n;
  m2 = m2 < 0.0f ? 0.0f : m2;  // rounding can go below 0; not max(), which would turn NaN into 0
  return float4(n, mean, d.x / n, m2);
}

inline float4 var_combine(float4 p, float4 q) {
  const float n = p.x + q.x, delta = (q.y - p.y) + (q.z - p.z);
  return float4(n, p.y, p.z + delta * (q.x / n), p.w + q.w + delta * delta * (p.x * q.x / n));
}

inline float var_finish(float4 st, constant ReduceArgs& a) { return st.w / max(float(a.n_red) - a.correction, 0.0f); }

template <typename T>
inline float2 centered(T x, float mean) {
  const float d = float(x) - mean;
  return float2(d, d * d);
}

// Statistics of reduced elements [j0, j1) by a whole threadgroup.
template <typename T>
inline float4 var_group_stats(device const T* in, constant ReduceArgs& a, long base, long j0, long j1, uint lid,
                              uint tsize, uint lane, uint sg, uint nsg, threadgroup float* scratch1,
                              threadgroup float2* scratch2) {
  const float n = float(j1 - j0);
  float s = 0.0f;
  for (long j = j0 + lid; j < j1; j += tsize) s += float(in[base + red_offset(a, j, a.red_ndim)]);
  const float mean = block_all_reduce<AllSum<float>>(s, scratch1, lane, sg, nsg) / n;
  float2 d = float2(0.0f);
  for (long j = j0 + lid; j < j1; j += tsize) d += centered(in[base + red_offset(a, j, a.red_ndim)], mean);
  return var_stats(n, mean, block_all_reduce<AllSum<float2>>(d, scratch2, lane, sg, nsg));
}

template <typename T>
kernel void var_group(device const T* in [[buffer(0)]],
                      device T* out [[buffer(1)]],
                      constant ReduceArgs& a [[buffer(2)]],
                      uint group [[threadgroup_position_in_grid]],
                      uint lid [[thread_index_in_threadgroup]],
                      uint tsize [[threads_per_threadgroup]],
                      uint lane [[thread_index_in_simdgroup]],
                      uint sg [[simdgroup_index_in_threadgroup]],
                      uint nsg [[simdgroups_per_threadgroup]]) {
  threadgroup float scratch1[BM_SIMD_WIDTH];
  threadgroup float2 scratch2[BM_SIMD_WIDTH];
  long base, at;
  kept_offsets(a, group, base, at);
  const float4 st = var_group_stats(in, a, base, 0, a.n_red, lid, tsize, lane, sg, nsg, scratch1, scratch2);
  if (lid == 0) out[at] = T(var_finish(st, a));
}

template <typename T>
kernel void var_partial(device const T* in [[buffer(0)]],
                        device float4* partial [[buffer(1)]],
                        constant ReduceArgs& a [[buffer(2)]],
                        uint group [[threadgroup_position_in_grid]],
                        uint lid [[thread_index_in_threadgroup]],
                        uint tsize [[threads_per_threadgroup]],
                        uint lane [[thread_index_in_simdgroup]],
                        uint sg [[simdgroup_index_in_threadgroup]],
                        uint nsg [[simdgroups_per_threadgroup]]) {
  threadgroup float scratch1[BM_SIMD_WIDTH];
  threadgroup float2 scratch2[BM_SIMD_WIDTH];
  long base, at;
  kept_offsets(a, group / a.n_split, base, at);
  const long j0 = (group % a.n_split) * a.chunk, j1 = j0 + a.chunk < a.n_red ? j0 + a.chunk : a.n_red;
  const float4 st = var_group_stats(in, a, base, j0, j1, lid, tsize, lane, sg, nsg, scratch1, scratch2);
  if (lid == 0) partial[group] = st;
}

template <typename T>
kernel void var_merge(device const float4* partial [[buffer(0)]],
                      device T* out [[buffer(1)]],
                      constant ReduceArgs& a [[buffer(2)]],
                      uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_out) return;
  long base, at;
  kept_offsets(a, gid, base, at);
  float4 st = partial[long(gid) * a.n_split];
  for (int c = 1; c < a.n_split; ++c) st = var_combine(st, partial[long(gid) * a.n_split + c]);
  out[at] = T(var_finish(st, a));
}

template <typename T>
kernel void var_thread(device const T* in [[buffer(0)]],
                       device T* out [[buffer(1)]],
                       constant ReduceArgs& a [[buffer(2)]],
                       uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_out) return;
  long base, at;
  kept_offsets(a, gid, base, at);
  const float n = float(a.n_red);
  const float mean = reduce_serial<SumOp<T>>(in, a, base) / n;
  float2 d = float2(0.0f);
  for (long j = 0; j < a.n_red; ++j) d += centered(in[base + red_offset(a, j, a.red_ndim)], mean);
  out[at] = T(var_finish(var_stats(n, mean, d), a));
}

// ---------- instantiations: "reduce_<op>_<group|thread>_<dtype>" ----------

#define BM_REDUCE_OP(OPNAME, OP, NAME)                                                                     \
  template [[host_name("reduce_" #OPNAME "_group_" #NAME)]] [[kernel]] decltype(reduce_group<OP>)         \
      reduce_group<OP>;                                                                                    \
  template [[host_name("reduce_" #OPNAME "_thread_" #NAME)]] [[kernel]] decltype(reduce_thread<OP>)       \
      reduce_thread<OP>;                                                                                   \
  template [[host_name("reduce_" #OPNAME "_partial_" #NAME)]] [[kernel]] decltype(reduce_partial<OP>)     \
      reduce_partial<OP>;                                                                                  \
  template [[host_name("reduce_" #OPNAME "_merge_" #NAME)]] [[kernel]] decltype(reduce_merge<OP>)         \
      reduce_merge<OP>;                                                                                    \
  template [[host_name("reduce_" #OPNAME "_column_" #NAME)]] [[kernel]] decltype(reduce_column<OP>)       \
      reduce_column<OP>;

// sum, amax and amin take every dtype; argmax/argmin every dtype but bool.
template <typename T> struct AmaxOp : ExtremeOp<T, true> {};
template <typename T> struct AminOp : ExtremeOp<T, false> {};
template <typename T> struct ArgmaxOp : ArgOp<T, true> {};
template <typename T> struct ArgminOp : ArgOp<T, false> {};

#define BM_REDUCE_ALL(T, NAME)      \
  BM_REDUCE_OP(sum, SumOp<T>, NAME) \
  BM_REDUCE_OP(prod, ProdOp<T>, NAME) \
  BM_REDUCE_OP(amax, AmaxOp<T>, NAME) \
  BM_REDUCE_OP(amin, AminOp<T>, NAME)
BM_FOR_EACH_DTYPE(BM_REDUCE_ALL)

template <typename T> struct AnyOp : AnyAllOp<T, false> {};
template <typename T> struct AllOp : AnyAllOp<T, true> {};
#define BM_REDUCE_ANY_ALL(T, NAME)  \
  BM_REDUCE_OP(any, AnyOp<T>, NAME) \
  BM_REDUCE_OP(all, AllOp<T>, NAME)
BM_FOR_EACH_DTYPE(BM_REDUCE_ANY_ALL)

#define BM_REDUCE_ARG(T, NAME)              \
  BM_REDUCE_OP(argmax, ArgmaxOp<T>, NAME) \
  BM_REDUCE_OP(argmin, ArgminOp<T>, NAME)
BM_REDUCE_ARG(char, int8)
BM_REDUCE_ARG(uchar, uint8)
BM_REDUCE_ARG(short, int16)
BM_REDUCE_ARG(int, int32)
BM_REDUCE_ARG(long, int64)
BM_REDUCE_ARG(half, float16)
BM_REDUCE_ARG(bfloat, bfloat16)
BM_REDUCE_ARG(float, float32)

// mean and var: floating dtypes only.
#define BM_REDUCE_FLOAT(T, NAME)                                                                              \
  BM_REDUCE_OP(mean, MeanOp<T>, NAME)                                                                        \
  template [[host_name("reduce_var_group_" #NAME)]] [[kernel]] decltype(var_group<T>) var_group<T>;                 \
  template [[host_name("reduce_var_thread_" #NAME)]] [[kernel]] decltype(var_thread<T>) var_thread<T>;       \
  template [[host_name("reduce_var_partial_" #NAME)]] [[kernel]] decltype(var_partial<T>) var_partial<T>;    \
  template [[host_name("reduce_var_merge_" #NAME)]] [[kernel]] decltype(var_merge<T>) var_merge<T>;
BM_REDUCE_FLOAT(half, float16)
BM_REDUCE_FLOAT(bfloat, bfloat16)
BM_REDUCE_FLOAT(float, float32)
