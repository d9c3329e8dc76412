// cumsum, cumprod and argsort on Metal (shaders/scan.metal), along args->dim, any strides.
#include <algorithm>

#include "metal/kernels.h"
#include "metal/reduce_plan.h"

extern "C++" {
#include "kargs_scan.h"
}

namespace bm::metal {

namespace {

// argsort rows longer than this run the per-row merge sort; shorter ones the rank sort (one
// thread per element, O(len) each, all in parallel).
constexpr int64_t kRankSortMax = 256;

// The op's dim plays the reduced dim of a reduction plan (as for softmax); the other dims, merged,
// number the rows. per_element: one thread per element (argsort) instead of one per row.
void run_rows(const KernelCall& c, const char* base, bool per_element) {
  const Tensor& in = *c.in[0];
  const Tensor& out = *c.out;
  if (in.numel() == 0) return;
  MetalBackend& be = backend_of(out);
  RowPlan p = plan_rows(in, out, c.args->dim);
  const PlanDim along = p.along;
  for_each_outer(p.kept, in.offset, out.offset, [&](const std::vector<PlanDim>& rows, int64_t io, int64_t oo) {
    ScanArgs a{};
    a.len = along.size;
    a.in_stride = along.in_st;
    a.out_stride = along.out_st;
    a.in_offset = io;
    a.out_offset = oo;
    a.flag = c.args->descending ? 1 : 0;
    a.ndim = int(rows.size());
    a.n_rows = 1;
    for (size_t d = 0; d < rows.size(); ++d) {
      a.shape[d] = rows[d].size;
      a.in_strides[d] = rows[d].in_st;
      a.out_strides[d] = rows[d].out_st;
      a.n_rows *= rows[d].size;
    }
    if (per_element && a.len > kRankSortMax) {
      TensorPtr scratch = empty_tensor({a.n_rows * a.len * 2}, DType::Int64, out.device());
      be.dispatch(kernel_name("sort_merge", in.dtype), {{&in, 0}, {&out, 1}, {scratch.get(), 2}}, &a, sizeof(a), 3,
                  Size3{uint64_t(a.n_rows), 1, 1}, group_1d(a.n_rows));
      return;
    }
    const int64_t threads = per_element ? a.n_rows * a.len : a.n_rows;
    be.dispatch(kernel_name(base, in.dtype), {{&in, 0}, {&out, 1}}, &a, sizeof(a), 2, Size3{uint64_t(threads), 1, 1},
                group_1d(threads));
  });
}

void cumsum_kernel(const KernelCall& c) { run_rows(c, "scan_cumsum", false); }
void cumprod_kernel(const KernelCall& c) { run_rows(c, "scan_cumprod", false); }
void argsort_kernel(const KernelCall& c) { run_rows(c, "sort_argsort", true); }

void register_row(MetalBackend& b, OpId op, Kernel k) {
  DTypeMask m = op_row(op).dtypes;
  for (int i = 0; i < kNumDTypes; ++i)
    if ((m & (1u << i)) && DType(i) != DType::Float64) b.set_kernel(op, DType(i), k);  // Metal has no double
}

}  // namespace

void register_scan_kernels(MetalBackend& b) {
  register_row(b, OpId::cumsum, &cumsum_kernel);
  register_row(b, OpId::cumprod, &cumprod_kernel);
  register_row(b, OpId::argsort, &argsort_kernel);
}

}  // namespace bm::metal
