// Row ops along one dim, any strides (ScanArgs): cumsum / cumprod (inclusive scans) and argsort.
//
//   scan_cumsum_* / scan_cumprod_*  one thread per row walking it in order, so the result is the
//                   same sequential scan as the CPU's (half types accumulate in float, integers,
//                   already int64 by the dtype rule, in long with wrap-around; float32 in float,
//                   where the CPU uses double: the difference is within float rounding).
//   sort_argsort_*  one thread per element: its rank in the row is the number of elements that
//                   come before it (smaller keys, or equal keys at smaller positions, which makes
//                   the sort stable); it writes its own position at out[rank]. NaN sorts as the
//                   largest key; descending reverses the key order and keeps equal keys stable.
//                   O(len) work per element: race-free (ranks are distinct) and fully parallel,
//                   for rows up to a few hundred elements.
//   sort_merge_*    longer rows: one thread per row, a bottom-up stable merge sort of positions
//                   in a scratch buffer (two halves of len longs per row, ping-ponged), then the
//                   positions are written out: O(len log len) per row.
#include <metal_stdlib>
#include "dtypes.h"
#include "kargs_scan.h"
using namespace metal;

// Input and output offsets of the first element of row r (row-major over the other dims).
inline void scan_row_offsets(constant ScanArgs& a, long r, thread long& in_off, thread long& out_off) {
  in_off = a.in_offset;
  out_off = a.out_offset;
  for (int d = a.ndim - 1; d >= 0; --d) {
    long i = r % a.shape[d];
    r /= a.shape[d];
    in_off += i * a.in_strides[d];
    out_off += i * a.out_strides[d];
  }
}

// The accumulator of a scan: float for floating dtypes, long for the others.
template <typename T>
struct ScanAcc {
  typedef conditional_t<is_floating_point_v<T>, float, long> S;
};

template <typename T, bool kProd>
inline void scan_one_row(device const T* in, device T* out, constant ScanArgs& a, uint gid) {
  if (long(gid) >= a.n_rows) return;
  typedef typename ScanAcc<T>::S S;
  long ib, ob;
  scan_row_offsets(a, long(gid), ib, ob);
  S acc = kProd ? S(1) : S(0);
  for (long k = 0; k < a.len; ++k) {
    const S v = S(in[ib + k * a.in_stride]);
    acc = kProd ? acc * v : acc + v;
    out[ob + k * a.out_stride] = T(acc);
  }
}

template <typename T>
kernel void scan_cumsum(device const T* in [[buffer(0)]],
                        device T* out [[buffer(1)]],
                        constant ScanArgs& a [[buffer(2)]],
                        uint gid [[thread_position_in_grid]]) {
  scan_one_row<T, false>(in, out, a, gid);
}

template <typename T>
kernel void scan_cumprod(device const T* in [[buffer(0)]],
                         device T* out [[buffer(1)]],
                         constant ScanArgs& a [[buffer(2)]],
                         uint gid [[thread_position_in_grid]]) {
  scan_one_row<T, true>(in, out, a, gid);
}

// Sort keys: floats (half types widened), long for int64, int for bool and int32.
template <typename T>
struct SortKey {
  typedef conditional_t<is_floating_point_v<T>, float, conditional_t<is_same_v<T, long>, long, int>> K;
};

// a before b in ascending order, NaN the largest (two NaNs are equal).
template <typename K>
inline bool key_before(K a, K b) {
  const bool an = a != a, bn = b != b;
  return !an && (bn || a < b);
}

template <typename T>
kernel void sort_argsort(device const T* in [[buffer(0)]],
                         device long* out [[buffer(1)]],
                         constant ScanArgs& a [[buffer(2)]],
                         uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_rows * a.len) return;
  typedef typename SortKey<T>::K K;
  const long row = long(gid) / a.len, i = long(gid) % a.len;
  long ib, ob;
  scan_row_offsets(a, row, ib, ob);
  const K x = K(in[ib + i * a.in_stride]);
  const bool desc = a.flag != 0;
  long rank = 0;
  for (long j = 0; j < a.len; ++j) {
    const K y = K(in[ib + j * a.in_stride]);
    const bool before = desc ? key_before(x, y) : key_before(y, x);  // y strictly before x
    const bool tie = !key_before(x, y) && !key_before(y, x);
    rank += (before || (tie && j < i)) ? 1 : 0;
  }
  out[ob + rank * a.out_stride] = i;
}

// a strictly before b in the requested order (descending: the reversed key order, NaN first).
template <typename K>
inline bool order_before(K a, K b, bool desc) {
  return desc ? key_before(b, a) : key_before(a, b);
}

template <typename T>
kernel void sort_merge(device const T* in [[buffer(0)]],
                       device long* out [[buffer(1)]],
                       device long* scratch [[buffer(2)]],
                       constant ScanArgs& a [[buffer(3)]],
                       uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_rows) return;
  typedef typename SortKey<T>::K K;
  long ib, ob;
  scan_row_offsets(a, long(gid), ib, ob);
  const long n = a.len, st = a.in_stride;
  const bool desc = a.flag != 0;
  long src = long(gid) * 2 * n, dst = src + n;  // offsets of this row's two halves in scratch
  for (long i = 0; i < n; ++i) scratch[src + i] = i;
  for (long w = 1; w < n; w *= 2) {
    for (long lo = 0; lo < n; lo += 2 * w) {
      const long mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      long i = lo, j = mid;
      for (long k = lo; k < hi; ++k) {
        // the right run's head goes first only when strictly before the left's: stable
        const bool take_right =
            i >= mid ||
            (j < hi && order_before(K(in[ib + scratch[src + j] * st]), K(in[ib + scratch[src + i] * st]), desc));
        scratch[dst + k] = take_right ? scratch[src + j++] : scratch[src + i++];
      }
    }
    const long t = src;
    src = dst;
    dst = t;
  }
  for (long k = 0; k < n; ++k) out[ob + k * a.out_stride] = scratch[src + k];
}

// ---------- instantiations: "scan_cumsum_<dtype>", "scan_cumprod_<dtype>", "sort_argsort_<dtype>", "sort_merge_<dtype>" ----------

#define BM_SCAN_INSTANTIATE(T, NAME)                                                                         \
  template [[host_name("scan_cumsum_" #NAME)]] [[kernel]] decltype(scan_cumsum<T>) scan_cumsum<T>;          \
  template [[host_name("scan_cumprod_" #NAME)]] [[kernel]] decltype(scan_cumprod<T>) scan_cumprod<T>;       \
  template [[host_name("sort_argsort_" #NAME)]] [[kernel]] decltype(sort_argsort<T>) sort_argsort<T>;       \
  template [[host_name("sort_merge_" #NAME)]] [[kernel]] decltype(sort_merge<T>) sort_merge<T>;
BM_FOR_EACH_DTYPE(BM_SCAN_INSTANTIATE)
