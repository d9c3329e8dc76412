// sum prod mean var amax amin argmax argmin on Metal (shaders/reduce.metal), and the registration of
// softmax/log_softmax (ops_softmax.cpp).
//
// The host turns (input, keepdim output, dims) into ReduceArgs: kept dims (one output each) and
// reduced dims, both in logical order with size-1 dims dropped and contiguous neighbours merged.
// Reduced dims stay in logical order so the shader's element number is argmax's index.
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "core/ops.h"
#include "metal/kernels.h"
#include "metal/reduce_plan.h"

namespace bm::metal {

void register_softmax_kernels(MetalBackend& b);  // ops_softmax.cpp

namespace {

// A reduction at most this long runs one thread per output (no barriers, no collectives).
constexpr int64_t kSerialMax = 32;
// Column reductions (the outputs, not the reduced elements, are neighbours in memory) with at
// least this many outputs also run one thread per output: adjacent threads read adjacent memory.
constexpr int64_t kColumnOutputs = 1024;
// Threadgroup reductions are split over several groups per output while there are fewer than
// kFillGroups groups in all (a GPU has tens of cores, each running several groups) and each chunk
// keeps at least kMinChunk elements (16 per thread of a 256-thread group).
constexpr int64_t kFillGroups = 128;
constexpr int64_t kMinChunk = 4096;
// A long column reduction is split over several threads per output until the launch has about
// kFillThreads threads (a large GPU keeps ~250k resident), each chunk at least kMinColumnChunk rows.
constexpr int64_t kFillThreads = 1 << 18;
constexpr int64_t kMinColumnChunk = 64;
// Bytes per partial state: the largest is argmax's (value, long index) pair or var's float4.
constexpr int64_t kPartialBytes = 16;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Whole simdgroups, up to 256 threads: enough to cover short reductions without idle lanes.
Size3 group_size(int64_t n) { return Size3{uint64_t(std::min<int64_t>(256, ceil_div(n, 32) * 32)), 1, 1}; }

ReduceArgs make_args(const std::vector<PlanDim>& kept, const std::vector<PlanDim>& red, int64_t in_off,
                     int64_t out_off, double correction) {
  ReduceArgs a{};
  a.in_offset = in_off;
  a.out_offset = out_off;
  a.kept_ndim = int(kept.size());
  a.n_out = 1;
  for (size_t d = 0; d < kept.size(); ++d) {
    a.kept_shape[d] = kept[d].size;
    a.kept_in_strides[d] = kept[d].in_st;
    a.kept_out_strides[d] = kept[d].out_st;
    a.n_out *= kept[d].size;
  }
  a.red_ndim = int(red.size());
  a.n_red = 1;
  for (size_t d = 0; d < red.size(); ++d) {
    a.red_shape[d] = red[d].size;
    a.red_strides[d] = red[d].in_st;
    a.n_red *= red[d].size;
  }
  a.correction = float(correction);
  a.n_split = 1;
  a.chunk = a.n_red;
  return a;
}

void launch(const std::string& base, DType dt, const Tensor& in, const Tensor& out, ReduceArgs a, bool column) {
  MetalBackend& be = backend_of(out);
  const bool splittable = base != "reduce_var";  // var's two-pass statistics have no column kernel
  if (column && splittable && a.n_out >= kColumnOutputs && a.n_out < kFillThreads) {
    const int64_t split = std::min(a.n_red / kMinColumnChunk, ceil_div(kFillThreads, a.n_out));
    if (split >= 2) {
      a.chunk = ceil_div(a.n_red, split);
      a.n_split = int(ceil_div(a.n_red, a.chunk));  // no empty chunk
      TensorPtr partial = empty_tensor({a.n_out * a.n_split * kPartialBytes / 8}, DType::Int64, out.device(), true);
      be.dispatch(kernel_name(base + "_column", dt), {{&in, 0}, {partial.get(), 1}}, &a, sizeof(a), 2,
                  Size3{uint64_t(a.n_out * a.n_split), 1, 1}, group_1d(a.n_out * a.n_split));
      be.dispatch(kernel_name(base + "_merge", dt), {{partial.get(), 0}, {&out, 1}}, &a, sizeof(a), 2,
                  Size3{uint64_t(a.n_out), 1, 1}, group_1d(a.n_out));
      return;
    }
  }
  if (a.n_red <= kSerialMax || (column && a.n_out >= kColumnOutputs)) {
    be.dispatch(kernel_name(base + "_thread", dt), {{&in, 0}, {&out, 1}}, &a, sizeof(a), 2,
                Size3{uint64_t(a.n_out), 1, 1}, group_1d(a.n_out));
    return;
  }
  const int64_t split = std::min(a.n_red / kMinChunk, kFillGroups / a.n_out);
  if (split < 2) {
    be.dispatch_groups(kernel_name(base + "_group", dt), {{&in, 0}, {&out, 1}}, &a, sizeof(a), 2,
                       Size3{uint64_t(a.n_out), 1, 1}, group_size(a.n_red));
    return;
  }
  a.chunk = ceil_div(a.n_red, split);
  a.n_split = int(ceil_div(a.n_red, a.chunk));  // no empty chunk
  TensorPtr partial = empty_tensor({a.n_out * a.n_split * kPartialBytes / 8}, DType::Int64, out.device(), true);
  be.dispatch_groups(kernel_name(base + "_partial", dt), {{&in, 0}, {partial.get(), 1}}, &a, sizeof(a), 2,
                     Size3{uint64_t(a.n_out * a.n_split), 1, 1}, group_size(a.chunk));
  be.dispatch(kernel_name(base + "_merge", dt), {{partial.get(), 0}, {&out, 1}}, &a, sizeof(a), 2,
              Size3{uint64_t(a.n_out), 1, 1}, group_1d(a.n_out));
}

// Runs the reduction `base` ("reduce_sum", "reduce_var"...) of c.in[0] into c.out.
void run_reduce(const KernelCall& c, const std::string& base) {
  const Tensor* in = c.in[0];
  const Tensor& out = *c.out;
  if (out.numel() == 0) return;  // nothing to write (the input is never empty)
  const std::vector<int64_t>& dims = c.args->dims;
  ReducePlan p = plan_reduce(*in, out, dims);
  TensorPtr copy;  // keeps a rearranged input alive until the launches are encoded
  if (p.red.size() > BM_MAX_DIMS) {
    // Over BM_MAX_DIMS reduced dims that cannot merge (rare): copy the input with the reduced
    // dims innermost and contiguous, viewed back in the original dim order; they then merge.
    copy = reduced_innermost_copy(*in, dims);
    in = copy.get();
    p = plan_reduce(*in, out, dims);
  }
  const bool column = !p.kept.empty() && !p.red.empty() &&
                      std::llabs(p.kept.back().in_st) < std::llabs(p.red.back().in_st);
  if (p.red.empty()) p.red.push_back({1, 0, 0});  // 0-d input or only size-1 reduced dims
  // Over BM_MAX_DIMS kept dims: one launch per index of the outer ones.
  for_each_outer(p.kept, in->offset, out.offset, [&](const std::vector<PlanDim>& kept, int64_t io, int64_t oo) {
    launch(base, in->dtype, *in, out, make_args(kept, p.red, io, oo, c.args->correction), column);
  });
}

template <const char* kBase>
void reduce_kernel(const KernelCall& c) {
  run_reduce(c, kBase);
}

constexpr char kSum[] = "reduce_sum", kProd[] = "reduce_prod", kMean[] = "reduce_mean", kVar[] = "reduce_var", kAmax[] = "reduce_amax",
               kAmin[] = "reduce_amin", kArgmax[] = "reduce_argmax", kArgmin[] = "reduce_argmin",
               kAny[] = "reduce_any", kAll[] = "reduce_all";

// One kernel for every dtype of the op's row except float64 (Metal has no double).
void register_row(MetalBackend& b, OpId op, Kernel k) {
  DTypeMask m = op_row(op).dtypes;
  for (int i = 0; i < kNumDTypes; ++i)
    if ((m & (1u << i)) && DType(i) != DType::Float64) b.set_kernel(op, DType(i), k);
}

}  // namespace

void register_reduce_kernels(MetalBackend& b) {
  register_row(b, OpId::sum, &reduce_kernel<kSum>);
  register_row(b, OpId::prod, &reduce_kernel<kProd>);
  register_row(b, OpId::mean, &reduce_kernel<kMean>);
  register_row(b, OpId::var, &reduce_kernel<kVar>);
  register_row(b, OpId::amax, &reduce_kernel<kAmax>);
  register_row(b, OpId::amin, &reduce_kernel<kAmin>);
  register_row(b, OpId::argmax, &reduce_kernel<kArgmax>);
  register_row(b, OpId::argmin, &reduce_kernel<kArgmin>);
  register_row(b, OpId::any, &reduce_kernel<kAny>);
  register_row(b, OpId::all, &reduce_kernel<kAll>);
  register_softmax_kernels(b);
}

}  // namespace bm::metal
