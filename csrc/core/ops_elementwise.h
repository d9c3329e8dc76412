// Elementwise math whose arguments go beyond the op table's inputs (round's decimals, nan_to_num's
// replacements, lerp's dtype checks, fmod's divisor check), and the compositions reciprocal and
// square. The ops with no arguments (log1p, floor, isnan, bitwise_and...) are unary() / binary()
// of their rows.
#pragma once
#include <optional>

#include "core/ops.h"

namespace bm {

// torch.round(input, decimals=): half to even; decimals != 0 scales by 10^decimals (floats only,
// as torch: an integer input with decimals raises UnsupportedError).
TensorPtr round_decimals(const TensorPtr& t, int64_t decimals);
// torch.nan_to_num: NaN -> nan, +inf -> posinf, -inf -> neginf; a missing bound is the dtype's
// largest / lowest finite value. Integer and bool inputs come back as a copy.
TensorPtr nan_to_num(const TensorPtr& t, double nan, std::optional<double> posinf, std::optional<double> neginf);
// torch.lerp(input, end, weight): end must have input's dtype, and so must a weight tensor with
// dims (a 0-d weight tensor or a number is a scalar weight, as torch).
TensorPtr lerp(const TensorPtr& input, const TensorPtr& end, const Operand& weight);
// torch.fmod: C's remainder (the dividend's sign); integer division by zero raises
// ZeroDivisionError before anything is written (a number divisor checked here, a tensor by the kernel).
TensorPtr fmod(const Operand& a, const Operand& b);
// 1 / x (div: bool and integers give the default float dtype), and x * x (bool gives int64), as torch.
TensorPtr reciprocal(const TensorPtr& t);
TensorPtr square(const TensorPtr& t);

}  // namespace bm
