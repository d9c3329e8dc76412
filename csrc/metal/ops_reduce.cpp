#include "metal/kernels.h"

namespace bm::metal {

void register_reduce_kernels(MetalBackend& b) {}

}  // namespace bm::metal
