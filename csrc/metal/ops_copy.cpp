// copy (and casts), fill and arange on Metal.
#include <cstring>

#include "core/errors.h"
#include "metal/kernels.h"

namespace bm::metal {

namespace {

void fill_strides(const Layout& L, int k, int64_t* shape, int64_t* strides) {
  for (int d = 0; d < L.ndim; ++d) {
    shape[d] = L.shape[d];
    strides[d] = L.strides[k][d];
  }
}

void copy_kernel(const KernelCall& c) {
  const Tensor& src = *c.in[0];
  Tensor& dst = *c.out;
  MetalBackend& be = backend_of(dst);
  std::string name = src.dtype == dst.dtype ? kernel_name("copy_strided", dst.dtype)
                                            : std::string("cast_") + dtype_name(src.dtype) + "_" + dtype_name(dst.dtype);
  for_each_layout({&dst, &src}, [&](const Layout& L) {
    CopyStridedArgs a{};
    a.numel = L.numel;
    a.out_offset = L.offset[0];
    a.in_offset = L.offset[1];
    a.ndim = L.ndim;
    for (int d = 0; d < L.ndim; ++d) {
      a.shape[d] = L.shape[d];
      a.out_strides[d] = L.strides[0][d];
      a.in_strides[d] = L.strides[1][d];
    }
    be.dispatch(name, {{&src, 0}, {&dst, 1}}, &a, sizeof(a), 2, Size3{uint64_t(L.numel), 1, 1}, group_1d(L.numel));
  });
}

void fill_kernel(const KernelCall& c) {
  Tensor& out = *c.out;
  MetalBackend& be = backend_of(out);
  const Scalar& v = c.args->s0;
  for_each_layout({&out}, [&](const Layout& L) {
    FillArgs a{};
    a.numel = L.numel;
    a.offset = L.offset[0];
    a.ndim = L.ndim;
    fill_strides(L, 0, a.shape, a.strides);
    a.ivalue = out.dtype == DType::Bool ? int64_t(v.to<bool>()) : v.to<int64_t>();
    a.fvalue = v.to<float>();
    be.dispatch(kernel_name("fill", out.dtype), {{&out, 0}}, &a, sizeof(a), 1, Size3{uint64_t(L.numel), 1, 1},
                group_1d(L.numel));
  });
}

void arange_kernel(const KernelCall& c) {
  Tensor& out = *c.out;
  const Scalar &start = c.args->s0, &step = c.args->s1;
  ArangeArgs a{};
  a.n = out.shape[0];
  a.offset = out.offset;
  a.stride = out.strides[0];
  a.is_int = start.kind != Scalar::Float && step.kind != Scalar::Float;
  a.istart = start.to<int64_t>();
  a.istep = step.to<int64_t>();
  a.fstart = float(start.to<double>());
  a.fstep = float(step.to<double>());
  backend_of(out).dispatch(kernel_name("arange", out.dtype), {{&out, 0}}, &a, sizeof(a), 1,
                           Size3{uint64_t(a.n), 1, 1}, group_1d(a.n));
}

}  // namespace

void register_copy_kernels(MetalBackend& b) {
  for (int i = 0; i < kNumDTypes; ++i) {
    DType d = DType(i);
    if (d == DType::Float64) continue;  // Metal has no double
    b.set_kernel(OpId::copy, d, &copy_kernel);
    b.set_kernel(OpId::fill, d, &fill_kernel);
    if (d != DType::Bool) b.set_kernel(OpId::arange, d, &arange_kernel);
  }
}

}  // namespace bm::metal
