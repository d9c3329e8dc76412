#include "metal/kernels.h"

namespace bm::metal {

void register_random_kernels(MetalBackend& b) {}

}  // namespace bm::metal
