// uniform, normal and randint on Metal (shaders/random.metal). The counter layout and the float maps are
// csrc/cpu/random.cpp's (one header, shaders/philox.h), so a seed gives the same values on both.
#include "core/errors.h"
#include "metal/kernels.h"

namespace bm::metal {

namespace {

// The draw's parameters rounded to float exactly as the CPU kernels round them.
template <OpId op>
void random_kernel(const KernelCall& c) {
  Tensor& out = *c.out;
  const OpArgs& a = *c.args;
  MetalBackend& be = backend_of(out);
  const std::string name = kernel_name(op == OpId::uniform ? "uniform" : "normal", out.dtype);
  int64_t index_base = 0;  // logical index of the current launch's first element
  for_each_layout({&out}, [&](const Layout& L) {
    RandomArgs r{};
    r.numel = L.numel;
    r.index_base = index_base;
    r.offset = L.offset[0];
    r.ndim = L.ndim;
    for (int d = 0; d < L.ndim; ++d) {
      r.shape[d] = L.shape[d];
      r.strides[d] = L.strides[0][d];
    }
    r.seed = a.seed;
    r.rng_offset = a.rng_offset;
    if (op == OpId::uniform) {
      r.a = float(a.s0.f);            // low
      r.b = float(a.s1.f - a.s0.f);   // span, subtracted in double first as on the CPU
    } else {
      r.a = float(a.s0.f);  // mean
      r.b = float(a.s1.f);  // std
    }
    // one thread per Philox block the launch's elements fall in
    int64_t blocks = (index_base + L.numel - 1) / 4 - index_base / 4 + 1;
    be.dispatch(name, {{&out, 0}}, &r, sizeof(r), 1, Size3{uint64_t(blocks), 1, 1}, group_1d(blocks));
    index_base += L.numel;
  });
}

// randint: one thread per element (the range's modulo dominates; recomputing a block's Philox
// rounds for each of its words keeps the kernel simple).
void randint_kernel(const KernelCall& c) {
  Tensor& out = *c.out;
  const OpArgs& a = *c.args;
  MetalBackend& be = backend_of(out);
  const std::string name = kernel_name("randint", out.dtype);
  const uint64_t low = uint64_t(a.s0.i), range = uint64_t(a.s1.i) - low;
  int64_t index_base = 0;
  for_each_layout({&out}, [&](const Layout& L) {
    RandintArgs r{};
    r.numel = L.numel;
    r.index_base = index_base;
    r.offset = L.offset[0];
    r.ndim = L.ndim;
    r.wide = range > (uint64_t(1) << 32) ? 1 : 0;
    for (int d = 0; d < L.ndim; ++d) {
      r.shape[d] = L.shape[d];
      r.strides[d] = L.strides[0][d];
    }
    r.seed = a.seed;
    r.rng_offset = a.rng_offset;
    r.low = int64_t(low);
    r.range = range;
    be.dispatch(name, {{&out, 0}}, &r, sizeof(r), 1, Size3{uint64_t(L.numel), 1, 1}, group_1d(L.numel));
    index_base += L.numel;
  });
}

}  // namespace

void register_random_kernels(MetalBackend& b) {
  for (int i = 0; i < kNumDTypes; ++i)  // every dtype of the randint row but float64 (Metal has no double)
    if ((op_row(OpId::randint).dtypes & bit(DType(i))) && DType(i) != DType::Float64)
      b.set_kernel(OpId::randint, DType(i), &randint_kernel);
  for (DType d : {DType::Float32, DType::Float16, DType::BFloat16}) {  // Metal has no float64
    b.set_kernel(OpId::uniform, d, &random_kernel<OpId::uniform>);
    b.set_kernel(OpId::normal, d, &random_kernel<OpId::normal>);
  }
}

}  // namespace bm::metal
