// Elementwise math on Metal: shaders/unary_math.metal (log1p ... erfinv, floor ... round, sign,
// nan_to_num, bitwise_not, isnan ... logical_not) and shaders/binary_math.metal (atan2 hypot fmod,
// logical_* and bitwise_*, lerp), launched by ops_elementwise.cpp's launch_elementwise.
#include <array>
#include <cmath>
#include <string>

#include "core/errors.h"
#include "core/tensor.h"
#include "metal/kernels.h"

namespace bm::metal {

namespace {

// The compute dtype is the last input's (the logical ops and predicates write bool).
void launch(OpId op, const KernelCall& c, const ElementwiseArgs& params) {
  launch_elementwise(op, c.in[c.nin - 1]->dtype, c, params);
}

template <OpId op>
void plain_kernel(const KernelCall& c) {
  launch(op, c, ElementwiseArgs{});
}

// round(x, decimals): the shader scales by ten = 10^|decimals| rounded to float32, as the CPU
// rounds it to its float32 compute type.
void round_kernel(const KernelCall& c) {
  ElementwiseArgs p{};
  const int64_t d = c.args->has_s0 ? c.args->s0.i : 0;
  p.flags = d == 0 ? 0 : (d > 0 ? 1 : 2);
  p.fvalue[0] = float(std::pow(10.0, double(d < 0 ? -d : d)));
  launch(OpId::round, c, p);
}

// nan_to_num: the replacements (torch's defaults: 0 and the dtype's largest / lowest finite
// value) converted to float32, from which the shader rounds them to the element type as the CPU
// does from its compute type.
double max_finite(DType d) {
  switch (d) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;  // 0x7f7f
    default: return 3.4028234663852886e38;                // float32 (Metal has no float64)
  }
}
void nan_to_num_kernel(const KernelCall& c) {
  const OpArgs& a = *c.args;
  const DType dt = c.out->dtype;
  ElementwiseArgs p{};
  if (is_floating(dt)) {
    p.fvalue[0] = a.has_s0 ? float(a.s0.f) : 0.0f;
    p.fvalue[1] = float(a.has_s1 ? a.s1.f : max_finite(dt));
    p.fvalue[2] = float(a.has_s2 ? a.s2.f : -max_finite(dt));
  }
  launch(OpId::nan_to_num, c, p);
}

// Integer fmod raises on a zero divisor before anything is written, as on the CPU. A Python-number
// divisor was checked by the op layer (args.divisor_checked): no wait. A tensor divisor is checked
// on the GPU in queue order by binary.metal's divisor_check_zero (as remainder does).
void fmod_kernel(const KernelCall& c) {
  if (!is_floating(c.out->dtype) && !c.args->divisor_checked && any_flagged("divisor_check_zero", *c.in[1]))
    throw ZeroDivisionError("[fmod] integer division by zero");
  launch(OpId::fmod, c, ElementwiseArgs{});
}

// Registers k for every dtype of op's table row; Metal has no float64.
void register_row(MetalBackend& b, OpId op, Kernel k) {
  DTypeMask m = op_row(op).dtypes;
  for (int i = 0; i < kNumDTypes; ++i)
    if ((m & (1u << i)) && DType(i) != DType::Float64) b.set_kernel(op, DType(i), k);
}

}  // namespace

void register_math_kernels(MetalBackend& b) {
#define BM_METAL_MATH(NAME) register_row(b, OpId::NAME, &plain_kernel<OpId::NAME>);
  // unary_math.metal
  BM_METAL_MATH(log1p) BM_METAL_MATH(expm1) BM_METAL_MATH(log2) BM_METAL_MATH(log10) BM_METAL_MATH(exp2)
  BM_METAL_MATH(erf) BM_METAL_MATH(erfinv) BM_METAL_MATH(frac)
  BM_METAL_MATH(floor) BM_METAL_MATH(ceil) BM_METAL_MATH(trunc) BM_METAL_MATH(sign) BM_METAL_MATH(bitwise_not)
  BM_METAL_MATH(isnan) BM_METAL_MATH(isinf) BM_METAL_MATH(isfinite) BM_METAL_MATH(logical_not)
  register_row(b, OpId::round, &round_kernel);
  register_row(b, OpId::nan_to_num, &nan_to_num_kernel);
  // binary_math.metal
  BM_METAL_MATH(atan2) BM_METAL_MATH(hypot)
  BM_METAL_MATH(logical_and) BM_METAL_MATH(logical_or) BM_METAL_MATH(logical_xor)
  BM_METAL_MATH(bitwise_and) BM_METAL_MATH(bitwise_or) BM_METAL_MATH(bitwise_xor)
  BM_METAL_MATH(lerp)
  register_row(b, OpId::fmod, &fmod_kernel);
#undef BM_METAL_MATH
}

}  // namespace bm::metal
