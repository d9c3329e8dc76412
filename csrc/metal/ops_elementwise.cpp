#include "metal/kernels.h"

namespace bm::metal {

void register_elementwise_kernels(MetalBackend& b) {}

}  // namespace bm::metal
