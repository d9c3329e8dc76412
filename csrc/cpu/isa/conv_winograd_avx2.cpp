// The Winograd transforms compiled with -mavx2 -mfma (CMakeLists.txt adds this file, with those
// flags, on x86-64 only); conv_winograd.cpp calls them when the CPU has both.
#include "cpu/conv_winograd.h"

#define BM_WINO_NS wino_avx2
#include "cpu/conv_winograd_kernels.h"

namespace bm::cpu {

const WinogradKernels& winograd_kernels_avx2() { return wino_avx2::kernels(); }

}  // namespace bm::cpu
