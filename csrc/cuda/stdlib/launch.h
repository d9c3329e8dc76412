// What the generated __global__ trampolines (prepass.py --target cuda) use: the thread-position
// attributes of one thread, computed from blockIdx/threadIdx and the launch's BmCudaLaunch
// (csrc/cuda/abi.h), and the [[threadgroup(n)]] areas of the dynamic shared memory.
//
// A block is a threadgroup of the dispatch's size; threads past the grid return at once (Metal
// never starts them) and an edge group's threads_per_threadgroup is its part inside the grid.
// thread_index_in_threadgroup linearises x fastest over the dispatch's group size, as CUDA forms
// warps, so thread_index_in_simdgroup is the hardware lane. (The simulator compacts an edge group
// of a 2-D/3-D dispatch clipped in x instead: only there do the two index the threads differently.)
#pragma once
#include "cuda/abi.h"
#include "cuda/stdlib/scalar.h"
#include "cuda/stdlib/vec.h"

namespace bm_cuda {

typedef unsigned int u32;
struct Dim3 {
  u32 x, y, z;
};

struct LaneIds {
  Dim3 thread_position_in_grid;
  Dim3 thread_position_in_threadgroup;
  Dim3 threadgroup_position_in_grid;
  Dim3 threads_per_threadgroup;
  Dim3 dispatch_threads_per_threadgroup;
  Dim3 threadgroups_per_grid;
  Dim3 threads_per_grid;
  u32 thread_index_in_threadgroup;
  u32 thread_index_in_simdgroup;
  u32 simdgroup_index_in_threadgroup;
  u32 simdgroups_per_threadgroup;
  u32 threads_per_simdgroup;
};

inline u32 clipped(u32 group, u32 per_group, u32 grid) {
  unsigned long long start = (unsigned long long)group * per_group;
  unsigned long long left = grid - start;
  return left < per_group ? u32(left) : per_group;
}

// Fills `id`; false for a thread outside the grid (it must return before touching anything).
inline bool lane_ids(const BmCudaLaunch& l, LaneIds& id) {
  const Dim3 t{threadIdx.x, threadIdx.y, threadIdx.z};
  const Dim3 g{blockIdx.x, blockIdx.y, blockIdx.z};
  const Dim3 b{blockDim.x, blockDim.y, blockDim.z};
  const unsigned long long px = (unsigned long long)g.x * b.x + t.x;
  const unsigned long long py = (unsigned long long)g.y * b.y + t.y;
  const unsigned long long pz = (unsigned long long)g.z * b.z + t.z;
  if (px >= l.grid[0] || py >= l.grid[1] || pz >= l.grid[2]) return false;
  id.thread_position_in_grid = Dim3{u32(px), u32(py), u32(pz)};
  id.thread_position_in_threadgroup = t;
  id.threadgroup_position_in_grid = g;
  id.threads_per_threadgroup = Dim3{clipped(g.x, b.x, l.grid[0]), clipped(g.y, b.y, l.grid[1]),
                                    clipped(g.z, b.z, l.grid[2])};
  id.dispatch_threads_per_threadgroup = b;
  id.threadgroups_per_grid = Dim3{gridDim.x, gridDim.y, gridDim.z};
  id.threads_per_grid = Dim3{l.grid[0], l.grid[1], l.grid[2]};
  const u32 index = t.x + b.x * (t.y + b.y * t.z);
  const Dim3& n = id.threads_per_threadgroup;
  id.thread_index_in_threadgroup = index;
  id.thread_index_in_simdgroup = index % 32u;
  id.simdgroup_index_in_threadgroup = index / 32u;
  id.simdgroups_per_threadgroup = (n.x * n.y * n.z + 31u) / 32u;
  id.threads_per_simdgroup = 32u;
  return true;
}

// A thread-position attribute as the kernel declares it: uint, ushort, uint2, uint3...
template <class P>
metal::remove_cv_t<P> attr(const Dim3& d) {
  typedef metal::remove_cv_t<P> T;
  if constexpr (metal::detail::is_vec_v<T>) {
    static_assert(T::size < 4, "thread position attributes have at most 3 components");
    if constexpr (T::size == 2) return T(d.x, d.y);
    else return T(d.x, d.y, d.z);
  } else {
    return T(d.x);
  }
}
template <class P>
metal::remove_cv_t<P> attr(u32 v) {
  return metal::remove_cv_t<P>(v);
}

// The launch's dynamic shared memory; [[threadgroup(n)]] starts at BmCudaLaunch::tg_offset[n].
extern __shared__ __align__(16) unsigned char tg_memory[];
template <class P>
P threadgroup_arg(const BmCudaLaunch& l, int n) {
  return reinterpret_cast<P>(tg_memory + l.tg_offset[n]);
}

}  // namespace bm_cuda
