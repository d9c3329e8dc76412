// index_select / index_copy (index_rows), index_add and nonzero. Each mirrors csrc/cpu/index.cpp:
// one thread per output element, gathering (never scattering with atomics), so results do not
// depend on thread order and match the CPU bit for bit.
#include <metal_stdlib>
#include "dtypes.h"
#include "elementwise.h"
#include "kargs.h"
using namespace metal;

// ---- index_rows: dst[row d] := src[row s], rows mapped through index buffers ----
template <typename T, typename I>
kernel void index_rows(device const T* src [[buffer(0)]],
                       device T* dst [[buffer(1)]],
                       device const I* smap [[buffer(2)]],
                       device const I* dmap [[buffer(3)]],
                       constant IndexRowsArgs& a [[buffer(4)]],
                       uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.numel) return;
  long rest = long(gid), o0 = a.offset[0], o1 = a.offset[1], k = a.offset[2];
  for (int d = a.ndim - 1; d >= 0; --d) {
    long i = rest % a.shape[d];
    rest /= a.shape[d];
    o0 += i * a.strides[0][d];
    o1 += i * a.strides[1][d];
    k += i * a.strides[2][d];
  }
  long sr = long(smap[a.smap_offset + k * a.smap_stride]);
  long dr = a.has_dmap != 0 ? long(dmap[a.dmap_offset + k * a.dmap_stride]) : k;
  if (dr < 0 || dr >= a.dst_rows) return;
  T v = T(0);
  if (sr >= 0 && sr < a.src_rows) v = src[o1 + sr * a.src_row_stride];
  dst[o0 + dr * a.dst_row_stride] = v;
}

#define BM_INSTANTIATE_INDEX_ROWS(T, NAME)                                                              \
  template [[host_name("index_rows_" #NAME "_int32")]] [[kernel]] decltype(index_rows<T, int>)          \
      index_rows<T, int>;                                                                                \
  template [[host_name("index_rows_" #NAME "_int64")]] [[kernel]] decltype(index_rows<T, long>)         \
      index_rows<T, long>;
BM_FOR_EACH_DTYPE(BM_INSTANTIATE_INDEX_ROWS)

// ---- index_add: each output element adds its contributions in index order ----
inline bool bm_index_add(bool a, bool b) { return a || b; }
inline int bm_index_add(int a, int b) { return bm_wrap(uint(a) + uint(b)); }
inline long bm_index_add(long a, long b) { return bm_wrap(ulong(a) + ulong(b)); }
inline float bm_index_add(float a, float b) { return a + b; }

template <typename T>
kernel void index_add(device const T* base [[buffer(0)]],
                      device const T* src [[buffer(1)]],
                      device const long* csr [[buffer(2)]],
                      device T* out [[buffer(3)]],
                      constant IndexAddArgs& a [[buffer(4)]],
                      uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.numel) return;
  typedef typename bm_compute<T>::type A;
  long rest = long(gid), o0 = a.offset[0], o1 = a.offset[1], o2 = a.offset[2], p = a.offset[3];
  for (int d = a.ndim - 1; d >= 0; --d) {
    long i = rest % a.shape[d];
    rest /= a.shape[d];
    o0 += i * a.strides[0][d];
    o1 += i * a.strides[1][d];
    o2 += i * a.strides[2][d];
    p += i * a.strides[3][d];
  }
  A acc = A(base[o1]);
  const long q1 = csr[a.csr_offset + p + 1];
  for (long q = csr[a.csr_offset + p]; q < q1; ++q)
    acc = bm_index_add(acc, A(src[o2 + csr[a.csr_offset + a.rows + 1 + q] * a.src_row_stride]));
  out[o0] = T(acc);
}

#define BM_INSTANTIATE_INDEX_ADD(T, NAME) \
  template [[host_name("index_add_" #NAME)]] [[kernel]] decltype(index_add<T>) index_add<T>;
BM_FOR_EACH_DTYPE(BM_INSTANTIATE_INDEX_ADD)

// ---- nonzero: count per chunk, exclusive scan, write coordinates ----
inline long bm_index_truth(bool x) { return x ? 1 : 0; }
inline long bm_index_truth(int x) { return x != 0 ? 1 : 0; }
inline long bm_index_truth(long x) { return x != 0 ? 1 : 0; }
inline long bm_index_truth(half x) { return float(x) != 0.0f ? 1 : 0; }
inline long bm_index_truth(bfloat x) { return float(x) != 0.0f ? 1 : 0; }
inline long bm_index_truth(float x) { return x != 0.0f ? 1 : 0; }

// Coordinates and offset of logical element e.
inline long nonzero_seek(constant NonzeroArgs& a, long e, thread long* idx) {
  long off = a.in_offset;
  for (int d = a.ndim - 1; d >= 0; --d) {
    idx[d] = e % a.shape[d];
    e /= a.shape[d];
    off += idx[d] * a.strides[d];
  }
  return off;
}

// The next logical element: its coordinates in idx, returns the new offset.
inline long nonzero_step(constant NonzeroArgs& a, thread long* idx, long off) {
  for (int d = a.ndim - 1; d >= 0; --d) {
    off += a.strides[d];
    if (++idx[d] < a.shape[d]) return off;
    off -= a.strides[d] * a.shape[d];
    idx[d] = 0;
  }
  return off;
}

template <typename T>
kernel void nonzero_count(device const T* x [[buffer(0)]],
                          device long* counts [[buffer(1)]],
                          constant NonzeroArgs& a [[buffer(2)]],
                          uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_chunks) return;
  const long e0 = long(gid) * a.chunk, e1 = e0 + a.chunk < a.numel ? e0 + a.chunk : a.numel;
  long idx[BM_MAX_DIMS];
  long off = nonzero_seek(a, e0, idx);
  long c = 0;
  for (long e = e0; e < e1; ++e) {
    c += bm_index_truth(x[off]);
    off = nonzero_step(a, idx, off);
  }
  counts[gid] = c;
}

template <typename T>
kernel void nonzero_scan(device T* counts [[buffer(0)]],
                         constant NonzeroArgs& a [[buffer(1)]],
                         uint gid [[thread_position_in_grid]]) {
  if (gid != 0) return;
  T s = 0;
  for (long c = 0; c < a.n_chunks; ++c) {
    const T v = counts[c];
    counts[c] = s;
    s += v;
  }
}
template [[host_name("nonzero_scan")]] [[kernel]] decltype(nonzero_scan<long>) nonzero_scan<long>;

template <typename T>
kernel void nonzero_write(device const T* x [[buffer(0)]],
                          device const long* counts [[buffer(1)]],
                          device long* out [[buffer(2)]],
                          constant NonzeroArgs& a [[buffer(3)]],
                          uint gid [[thread_position_in_grid]]) {
  if (long(gid) >= a.n_chunks) return;
  const long e0 = long(gid) * a.chunk, e1 = e0 + a.chunk < a.numel ? e0 + a.chunk : a.numel;
  long idx[BM_MAX_DIMS];
  long off = nonzero_seek(a, e0, idx);
  long row = counts[gid];
  for (long e = e0; e < e1 && row < a.n_out; ++e) {
    if (bm_index_truth(x[off]) != 0) {
      for (int d = 0; d < a.ndim; ++d) out[a.out_offset + row * a.out_row_stride + d * a.out_col_stride] = idx[d];
      ++row;
    }
    off = nonzero_step(a, idx, off);
  }
}

#define BM_INSTANTIATE_NONZERO(T, NAME)                                                                   \
  template [[host_name("nonzero_count_" #NAME)]] [[kernel]] decltype(nonzero_count<T>) nonzero_count<T>; \
  template [[host_name("nonzero_write_" #NAME)]] [[kernel]] decltype(nonzero_write<T>) nonzero_write<T>;
BM_FOR_EACH_DTYPE(BM_INSTANTIATE_NONZERO)
