// The Winograd transforms and the panel product kernel compiled with AVX-512 (CMakeLists.txt adds
// this file, with those flags, on x86-64 only); conv_winograd.cpp calls them when the CPU has it.
#include "cpu/conv_winograd.h"

#define BM_WINO_NS wino_avx512
#include "cpu/conv_winograd_kernels.h"

namespace bm::cpu {

const WinogradKernels& winograd_kernels_avx512() { return wino_avx512::kernels(); }

}  // namespace bm::cpu
