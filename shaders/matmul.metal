// matmul_<dtype>: out[batch] = a[batch] @ b[batch] with arbitrary strides on every operand (see
// MatmulArgs in kargs.h). Each threadgroup computes one MM_TILE x MM_TILE tile of out for one batch
// entry: it steps along K by MM_BK, staging an A and a B tile in threadgroup memory (converted to
// the accumulator type once, on load), and each of its MM_T x MM_T threads accumulates an
// MM_R x MM_R block. Tiles past the edge of M, N or K are padded with zeros, so partial tiles need
// no special path: padding along K multiplies zero by zero, and padded rows or columns are never
// stored. float16/bfloat16 accumulate in float32; int32/int64 in uint/ulong, which wraps on
// overflow exactly like the CPU kernel (signed overflow would be undefined).
#include <metal_stdlib>
#include "kargs.h"
using namespace metal;

constant constexpr int MM_TILE = 32;  // rows and columns of out per threadgroup
constant constexpr int MM_BK = 16;    // depth of one K step
constant constexpr int MM_T = 8;      // threads per side of the threadgroup
constant constexpr int MM_R = MM_TILE / MM_T;  // out rows (and columns) per thread
constant constexpr int MM_THREADS = MM_T * MM_T;

inline float mm_madd(float acc, float x, float y) { return fma(x, y, acc); }
inline uint mm_madd(uint acc, uint x, uint y) { return acc + x * y; }
inline ulong mm_madd(ulong acc, ulong x, ulong y) { return acc + x * y; }

template <typename T, typename Acc>
kernel void matmul_tiled(device const T* a [[buffer(0)]],
                         device const T* b [[buffer(1)]],
                         device T* out [[buffer(2)]],
                         constant MatmulArgs& args [[buffer(3)]],
                         uint3 group [[threadgroup_position_in_grid]],
                         uint3 lid [[thread_position_in_threadgroup]],  // MSL: same width as group
                         uint tid [[thread_index_in_threadgroup]]) {
  threadgroup Acc As[MM_TILE][MM_BK];  // As[i][k]: tile row i, step column k
  threadgroup Acc Bs[MM_BK][MM_TILE];  // Bs[k][j]

  // This group's batch entry: its index decomposed over the (merged) batch dims.
  long ao = args.a_offset, bo = args.b_offset, oo = args.out_offset;
  long rest = group.z;
  for (int d = args.batch_ndim - 1; d >= 0; --d) {
    long i = rest % args.batch_shape[d];
    rest /= args.batch_shape[d];
    ao += i * args.a_bstrides[d];
    bo += i * args.b_bstrides[d];
    oo += i * args.out_bstrides[d];
  }
  const long row0 = long(group.y) * MM_TILE, col0 = long(group.x) * MM_TILE;

  Acc acc[MM_R][MM_R];
  for (int r = 0; r < MM_R; ++r)
    for (int c = 0; c < MM_R; ++c) acc[r][c] = Acc(0);

  for (long k0 = 0; k0 < args.K; k0 += MM_BK) {
    // Consecutive threads load along the operand's unit-stride dim when it has one.
    for (uint e = tid; e < uint(MM_TILE * MM_BK); e += MM_THREADS) {
      uint i = args.a_k_fast ? e / MM_BK : e % MM_TILE;
      uint k = args.a_k_fast ? e % MM_BK : e / MM_TILE;
      long gi = row0 + i, gk = k0 + k;
      As[i][k] = (gi < args.M && gk < args.K) ? Acc(a[ao + gi * args.a_rs + gk * args.a_cs]) : Acc(0);
    }
    for (uint e = tid; e < uint(MM_BK * MM_TILE); e += MM_THREADS) {
      uint k = args.b_k_fast ? e % MM_BK : e / MM_TILE;
      uint j = args.b_k_fast ? e / MM_BK : e % MM_TILE;
      long gk = k0 + k, gj = col0 + j;
      Bs[k][j] = (gk < args.K && gj < args.N) ? Acc(b[bo + gk * args.b_rs + gj * args.b_cs]) : Acc(0);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int k = 0; k < MM_BK; ++k) {
      // rows lid.y + r * MM_T and columns lid.x + c * MM_T: a simdgroup reads few distinct As
      // rows (broadcast) and consecutive Bs columns
      Acc av[MM_R], bv[MM_R];
      for (int r = 0; r < MM_R; ++r) av[r] = As[lid.y + r * MM_T][k];
      for (int c = 0; c < MM_R; ++c) bv[c] = Bs[k][lid.x + c * MM_T];
      for (int r = 0; r < MM_R; ++r)
        for (int c = 0; c < MM_R; ++c) acc[r][c] = mm_madd(acc[r][c], av[r], bv[c]);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);  // the tiles are overwritten next step
  }

  for (int r = 0; r < MM_R; ++r) {
    long gi = row0 + lid.y + r * MM_T;
    if (gi >= args.M) break;
    for (int c = 0; c < MM_R; ++c) {
      long gj = col0 + lid.x + c * MM_T;
      if (gj < args.N) out[oo + gi * args.out_rs + gj * args.out_cs] = T(acc[r][c]);
    }
  }
}

#define BM_INSTANTIATE_MATMUL(T, ACC, NAME) \
  template [[host_name("matmul_" #NAME)]] [[kernel]] decltype(matmul_tiled<T, ACC>) matmul_tiled<T, ACC>;
// The matmul row's dtypes on Metal (no bool row entry, no float64 on Metal).
BM_INSTANTIATE_MATMUL(float, float, float32)
BM_INSTANTIATE_MATMUL(half, float, float16)
BM_INSTANTIATE_MATMUL(bfloat, float, bfloat16)
BM_INSTANTIATE_MATMUL(char, uint, int8)
BM_INSTANTIATE_MATMUL(uchar, uint, uint8)
BM_INSTANTIATE_MATMUL(short, uint, int16)
BM_INSTANTIATE_MATMUL(int, uint, int32)
BM_INSTANTIATE_MATMUL(long, ulong, int64)
