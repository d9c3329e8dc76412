// floor_divide, remainder (torch's floor semantics) and the any / all reductions.
#pragma once
#include "core/ops.h"

namespace bm {

// a // b and a % b with broadcasting and type promotion, as torch: the quotient is rounded toward
// -inf and the remainder takes the divisor's sign. Floats follow IEEE for a zero divisor (x // 0 is
// +-inf or nan, x % 0 is nan); integer division by zero raises ZeroDivisionError naming the op, on
// every device, before anything is written. A Python-number divisor is checked here on the host;
// a tensor divisor is scanned by the kernel (on Metal that waits for the queue, as integer pow's
// exponent check does). binary(OpId::floor_divide / remainder, ...) comes here.
TensorPtr floor_divide(const Operand& a, const Operand& b);
TensorPtr remainder(const Operand& a, const Operand& b);

// torch.any / torch.all over `dims` (empty: every dim): bool output for any input dtype; NaN counts
// as true. Over zero elements any is false and all is true.
TensorPtr any(const TensorPtr& t, const Dims& dims, bool keepdim);
TensorPtr all(const TensorPtr& t, const Dims& dims, bool keepdim);

}  // namespace bm
