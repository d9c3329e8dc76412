// softmax and log_softmax on Metal (shaders/softmax.metal), along args->dim, any strides.
#include <algorithm>
#include <cstdlib>

#include "metal/kernels.h"
#include "metal/reduce_plan.h"

namespace bm::metal {

namespace {

// Rows at most this long run one thread per row (no barriers, no collectives).
constexpr int64_t kSerialMax = 32;
// Rows that run across memory (another dim is closer in memory than the softmax dim) run one
// thread per row once there are this many: adjacent threads then read adjacent elements.
constexpr int64_t kColumnRows = 1024;

template <bool kLog>
void softmax_kernel(const KernelCall& c) {
  const Tensor& in = *c.in[0];
  const Tensor& out = *c.out;
  if (in.numel() == 0) return;
  MetalBackend& be = backend_of(out);
  // The softmax dim plays the reduced dim of a reduction plan; the other dims number the rows.
  RowPlan p = plan_rows(in, out, c.args->dim);
  const PlanDim along = p.along;
  const bool column = !p.kept.empty() && std::llabs(p.kept.back().in_st) < std::llabs(along.in_st);
  for_each_outer(p.kept, in.offset, out.offset, [&](const std::vector<PlanDim>& rows, int64_t io, int64_t oo) {
    SoftmaxArgs a{};
    a.len = along.size;
    a.in_stride = along.in_st;
    a.out_stride = along.out_st;
    a.in_offset = io;
    a.out_offset = oo;
    a.is_log = kLog;
    a.ndim = int(rows.size());
    a.n_rows = 1;
    for (size_t d = 0; d < rows.size(); ++d) {
      a.shape[d] = rows[d].size;
      a.in_strides[d] = rows[d].in_st;
      a.out_strides[d] = rows[d].out_st;
      a.n_rows *= rows[d].size;
    }
    if (a.len <= kSerialMax || (column && a.n_rows >= kColumnRows)) {
      be.dispatch(kernel_name("softmax_thread", in.dtype), {{&in, 0}, {&out, 1}}, &a, sizeof(a), 2,
                  Size3{uint64_t(a.n_rows), 1, 1}, group_1d(a.n_rows));
    } else {
      const uint64_t threads = uint64_t(std::min<int64_t>(256, (a.len + 31) / 32 * 32));
      be.dispatch_groups(kernel_name("softmax_group", in.dtype), {{&in, 0}, {&out, 1}}, &a, sizeof(a), 2,
                         Size3{uint64_t(a.n_rows), 1, 1}, Size3{threads, 1, 1});
    }
  });
}

}  // namespace

void register_softmax_kernels(MetalBackend& b) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType d = DType(i);
    if (d == DType::Float64) continue;  // Metal has no double
    if (op_row(OpId::softmax).dtypes & bit(d)) b.set_kernel(OpId::softmax, d, &softmax_kernel<false>);
    if (op_row(OpId::log_softmax).dtypes & bit(d)) b.set_kernel(OpId::log_softmax, d, &softmax_kernel<true>);
  }
}

}  // namespace bm::metal
