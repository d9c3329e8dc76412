// Elementwise ops on Metal: unary ops and clamp (shaders/unary.metal), binary ops and comparisons
// (shaders/binary.metal), where (shaders/where.metal). One launch path serves them all: the
// operands (already cast and broadcast by the dispatcher) are merged into launch layouts, and each
// layout runs "<op>_1d_<dtype>" when it has at most one dim (contiguous operands and broadcast
// scalars merge to one dim) and "<op>_strided_<dtype>" otherwise.
#include <array>
#include <cmath>
#include <string>
#include <type_traits>

#include "core/clamp_bound.h"
#include "core/errors.h"
#include "core/tensor.h"
#include "metal/kernels.h"

namespace bm::metal {

namespace {

// From this many elements a 1-d launch runs BM_EW_PER_THREAD elements per thread (shaders/
// elementwise.h); below it, one per thread keeps every core busy.
constexpr int64_t kManyElements = 1 << 16;

// Kernel host names per op and dtype, built once (a launch should not build strings).
struct OpNames {
  std::array<std::string, kNumDTypes> strided, flat;
};
const OpNames& names_of(OpId op) {
  static const std::array<OpNames, kNumOps> table = [] {
    std::array<OpNames, kNumOps> t;
    for (int o = 0; o < kNumOps; ++o)
      for (int d = 0; d < kNumDTypes; ++d) {
        std::string base = op_row(OpId(o)).name;
        t[o].strided[d] = kernel_name(base + "_strided", DType(d));
        t[o].flat[d] = kernel_name(base + "_1d", DType(d));
      }
    return t;
  }();
  return table[int(op)];
}

}  // namespace

// out = op(in...) with `params` (op parameters) for kernels instantiated for dtype `dt`. Inputs
// are bound at buffers 0..nin-1, the output at nin, the arguments at nin+1.
void launch_elementwise(OpId op, DType dt, const KernelCall& c, const ElementwiseArgs& params) {
  MetalBackend& be = backend_of(*c.out);
  std::vector<const Tensor*> ts{c.out};
  std::vector<MetalBackend::Binding> bind;
  for (int i = 0; i < c.nin; ++i) {
    ts.push_back(c.in[i]);
    bind.push_back({c.in[i], uint32_t(i)});
  }
  bind.push_back({c.out, uint32_t(c.nin)});
  const OpNames& names = names_of(op);
  for_each_layout(ts, [&](const Layout& L) {
    ElementwiseArgs a = params;
    set_layout(L, &a);
    if (L.ndim <= 1) {  // the 1-d kernels take any grid: BM_EW_PER_THREAD elements a thread when long
      const int64_t threads = L.numel >= kManyElements ? (L.numel + BM_EW_PER_THREAD - 1) / BM_EW_PER_THREAD : L.numel;
      be.dispatch(names.flat[int(dt)], bind, &a, sizeof(a), uint32_t(c.nin + 1), Size3{uint64_t(threads), 1, 1},
                  group_1d(threads));
    } else {
      be.dispatch(names.strided[int(dt)], bind, &a, sizeof(a), uint32_t(c.nin + 1), Size3{uint64_t(L.numel), 1, 1},
                  group_1d(L.numel));
    }
  });
}

namespace {

// Ops without parameters; kernels are named by the input dtype (the compute dtype: comparisons
// write bool, where's condition is bool and its values come last).
template <OpId op>
void elementwise_kernel(const KernelCall& c) {
  launch_elementwise(op, c.in[c.nin - 1]->dtype, c, ElementwiseArgs{});
}

// Bounds converted as the CPU converts them (core/clamp_bound.h), so both clamp to the same
// values: floats in float32 (the compute type of every Metal float dtype), integers saturated.
void clamp_kernel(const KernelCall& c) {
  const OpArgs& a = *c.args;
  const DType dt = c.out->dtype;
  ElementwiseArgs p{};
  p.flags = (a.has_s0 ? BM_CLAMP_HAS_LO : 0) | (a.has_s1 ? BM_CLAMP_HAS_HI : 0);
  if (is_floating(dt)) {
    if ((a.has_s0 && std::isnan(a.s0.f)) || (a.has_s1 && std::isnan(a.s1.f))) {
      p.flags |= BM_CLAMP_NAN;  // torch: a NaN bound makes every result NaN
      p.fvalue[0] = NAN;
    } else {
      if (a.has_s0) p.fvalue[0] = clamp_bound<float>(a.s0);
      if (a.has_s1) p.fvalue[1] = clamp_bound<float>(a.s1);
    }
  } else if (dt != DType::Int64) {
    // int8 ... int32: saturated to the element type (the shader compares in int).
    visit_dtype(dt, [&](auto v) {
      using T = decltype(v);
      if constexpr (std::is_integral_v<T>) {
        if (a.has_s0) p.ivalue[0] = clamp_bound<T>(a.s0);
        if (a.has_s1) p.ivalue[1] = clamp_bound<T>(a.s1);
      }
    });
  } else {
    if (a.has_s0) p.ivalue[0] = clamp_bound<int64_t>(a.s0);
    if (a.has_s1) p.ivalue[1] = clamp_bound<int64_t>(a.s1);
  }
  launch_elementwise(OpId::clamp, dt, c, p);
}

// Integer pow raises on a negative exponent before anything is written, as on the CPU. The
// exponent lives in device memory, possibly still being produced by queued work, so the check runs
// on the GPU in queue order: pow_check_negative sets a flag, the host waits for the queue and reads
}  // namespace

// the flag, and only then is pow launched. The wait makes integer pow a synchronous op; integer
// powers are rare, and the error must surface at the call that caused it.
// any_flagged: true when the kernel `<base>_<dtype>` (pow_check_negative, divisor_check_zero)
// flags any element of e.
bool any_flagged(const char* base, const Tensor& e) {
  MetalBackend& be = backend_of(e);
  Tensor v = e;  // broadcast (stride-0) dims read once: `x ** -1` reads one element
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.strides[d] == 0) v.shape[d] = 1;
  // A fresh allocation has no queued work, so the host may initialise it directly.
  TensorPtr flag = empty_tensor({}, DType::Int32, e.device());
  *flag->data<int32_t>() = 0;
  const std::string name = kernel_name(base, e.dtype);
  for_each_layout({&v}, [&](const Layout& L) {
    ElementwiseArgs a{};
    set_layout(L, &a);
    be.dispatch(name, {{&v, 0}, {flag.get(), 1}}, &a, sizeof(a), 2, Size3{uint64_t(L.numel), 1, 1},
                group_1d(L.numel));
  });
  be.synchronize();
  return *flag->data<int32_t>() != 0;
}

namespace {

void check_no_negative_exponent(const Tensor& e) {
  if (any_flagged("pow_check_negative", e))
    throw ValueError("[pow] integers to negative integer powers are not allowed");
}

// Integer floor_divide / remainder raise on a zero divisor before anything is written, as on the
// CPU. A Python-number divisor was checked by the op layer (args.divisor_checked): no wait. A
// tensor divisor is checked on the GPU like pow's exponent, which makes the op wait for the queue.
template <OpId op>
void division_kernel(const KernelCall& c) {
  const DType dt = c.out->dtype;
  if (is_integral(dt) && !c.args->divisor_checked &&
      any_flagged("divisor_check_zero", *c.in[1]))
    throw ZeroDivisionError(std::string("[") + op_row(op).name + "] integer division by zero");
  launch_elementwise(op, dt, c, ElementwiseArgs{});
}

void pow_kernel(const KernelCall& c) {
  const DType dt = c.out->dtype;
  if (is_integral(dt)) check_no_negative_exponent(*c.in[1]);
  launch_elementwise(OpId::pow, dt, c, ElementwiseArgs{});
}

// Registers k for every dtype of op's table row; Metal has no float64.
void register_row(MetalBackend& b, OpId op, Kernel k) {
  DTypeMask m = op_row(op).dtypes;
  for (int i = 0; i < kNumDTypes; ++i)
    if ((m & (1u << i)) && DType(i) != DType::Float64) b.set_kernel(op, DType(i), k);
}

}  // namespace

void register_elementwise_kernels(MetalBackend& b) {
#define BM_METAL_ELEMENTWISE(NAME) register_row(b, OpId::NAME, &elementwise_kernel<OpId::NAME>);
  // unary.metal
  BM_METAL_ELEMENTWISE(neg) BM_METAL_ELEMENTWISE(abs) BM_METAL_ELEMENTWISE(relu)
  BM_METAL_ELEMENTWISE(exp) BM_METAL_ELEMENTWISE(log) BM_METAL_ELEMENTWISE(sqrt) BM_METAL_ELEMENTWISE(rsqrt)
  BM_METAL_ELEMENTWISE(sin) BM_METAL_ELEMENTWISE(cos) BM_METAL_ELEMENTWISE(tanh) BM_METAL_ELEMENTWISE(sigmoid)
  BM_METAL_ELEMENTWISE(silu) BM_METAL_ELEMENTWISE(gelu) BM_METAL_ELEMENTWISE(gelu_tanh)
  register_row(b, OpId::clamp, &clamp_kernel);
  // binary.metal
  BM_METAL_ELEMENTWISE(add) BM_METAL_ELEMENTWISE(sub) BM_METAL_ELEMENTWISE(mul) BM_METAL_ELEMENTWISE(div)
  BM_METAL_ELEMENTWISE(maximum) BM_METAL_ELEMENTWISE(minimum)
  BM_METAL_ELEMENTWISE(eq) BM_METAL_ELEMENTWISE(ne) BM_METAL_ELEMENTWISE(lt) BM_METAL_ELEMENTWISE(le)
  BM_METAL_ELEMENTWISE(gt) BM_METAL_ELEMENTWISE(ge)
  register_row(b, OpId::pow, &pow_kernel);
  // binary.metal: activation gradients (h2)
  BM_METAL_ELEMENTWISE(gelu_backward) BM_METAL_ELEMENTWISE(gelu_tanh_backward) BM_METAL_ELEMENTWISE(silu_backward) BM_METAL_ELEMENTWISE(relu_backward)
  register_row(b, OpId::floor_divide, &division_kernel<OpId::floor_divide>);
  register_row(b, OpId::remainder, &division_kernel<OpId::remainder>);
  // where.metal
  BM_METAL_ELEMENTWISE(where)
#undef BM_METAL_ELEMENTWISE
}

}  // namespace bm::metal
