// softmax_backward and log_softmax_backward on Metal (shaders/softmax_backward.metal), along
// args->dim, any strides: the other dims of grad, y and the result, merged over all three, number
// the rows; each row reduces along the dim in one thread or one threadgroup.
#include <algorithm>
#include <array>
#include <cstdlib>

#include "metal/kernels.h"

namespace bm::metal {

namespace {

// Rows at most this long run one thread per row (no barriers, no collectives).
constexpr int64_t kSerialMax = 32;
// Rows that run across memory (another dim is closer in memory than the softmax dim) run one
// thread per row once there are this many: adjacent threads then read adjacent elements.
constexpr int64_t kColumnRows = 1024;

// t without its softmax dim (a 0-d tensor stays 0-d).
Tensor rows_view(const Tensor& t, int64_t dim) {
  Tensor v = t;
  if (t.ndim() > 0) {
    v.shape.erase(v.shape.begin() + dim);
    v.strides.erase(v.strides.begin() + dim);
  }
  return v;
}

template <bool kLog>
void softmax_backward_kernel(const KernelCall& c) {
  const std::array<const Tensor*, 3> ts{c.in[0], c.in[1], c.out};
  const Tensor& out = *c.out;
  MetalBackend& be = backend_of(out);
  const int64_t dim = c.args->dim;
  const bool has_dim = out.ndim() > 0;
  const Tensor gr = rows_view(*ts[0], dim), yr = rows_view(*ts[1], dim), orows = rows_view(out, dim);
  const std::string group = kernel_name("softmax_backward_group", out.dtype);
  const std::string thread = kernel_name("softmax_backward_thread", out.dtype);
  const std::vector<MetalBackend::Binding> bind{{ts[0], 0}, {ts[1], 1}, {&out, 2}};
  for_each_layout({&gr, &yr, &orows}, [&](const Layout& L) {
    SoftmaxBackwardArgs a{};
    a.n_rows = L.numel;
    a.len = has_dim ? out.shape[size_t(dim)] : 1;
    for (int k = 0; k < 3; ++k) {
      a.offset[k] = L.offset[size_t(k)];
      a.stride[k] = has_dim ? ts[size_t(k)]->strides[size_t(dim)] : 0;
      for (int d = 0; d < L.ndim; ++d) a.strides[k][d] = L.strides[size_t(k)][d];
    }
    a.is_log = kLog;
    a.ndim = L.ndim;
    for (int d = 0; d < L.ndim; ++d) a.shape[d] = L.shape[d];
    const bool column = L.ndim > 0 && std::llabs(L.strides[1][L.ndim - 1]) < std::llabs(a.stride[1]);
    if (a.len <= kSerialMax || (column && a.n_rows >= kColumnRows)) {
      be.dispatch(thread, bind, &a, sizeof(a), 3, Size3{uint64_t(a.n_rows), 1, 1}, group_1d(a.n_rows));
    } else {
      const uint64_t threads = uint64_t(std::min<int64_t>(256, (a.len + 31) / 32 * 32));
      be.dispatch_groups(group, bind, &a, sizeof(a), 3, Size3{uint64_t(a.n_rows), 1, 1}, Size3{threads, 1, 1});
    }
  });
}

}  // namespace

void register_softmax_backward_kernels(MetalBackend& b) {
  for (DType d : {DType::Float16, DType::BFloat16, DType::Float32}) {
    b.set_kernel(OpId::softmax_backward, d, &softmax_backward_kernel<false>);
    b.set_kernel(OpId::log_softmax_backward, d, &softmax_backward_kernel<true>);
  }
}

}  // namespace bm::metal
