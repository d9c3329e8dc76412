// The CUDA driver API, opened at run time (libcuda.so.1) so that one build works on machines
// with and without an NVIDIA driver: a machine without one simply has no "cuda" device, and says
// why (driver_status()). Types and prototypes come from the toolkit's cuda.h; symbols are looked
// up under the names cuda.h maps them to (cuMemAlloc -> cuMemAlloc_v2...).
#pragma once
#include <cuda.h>

#include <string>

namespace bm::cuda {

// Required entry points. A function missing from the driver makes the whole driver unusable.
#define BM_CUDA_DRIVER_FUNCS(X)                                                                   \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)          \
  X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain)                        \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuStreamCreate)          \
  X(cuStreamDestroy) X(cuStreamSynchronize) X(cuEventCreate) X(cuEventRecord)                    \
  X(cuEventSynchronize) X(cuEventQuery) X(cuEventDestroy) X(cuMemAllocManaged) X(cuMemFree)      \
  X(cuMemsetD8Async) X(cuMemGetInfo) X(cuModuleLoadData) X(cuModuleUnload)                       \
  X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuLaunchKernel) X(cuGetErrorName)               \
  X(cuGetErrorString)

struct Driver {
#define BM_CUDA_MEMBER(f) decltype(&::f) f##_ = nullptr;
  BM_CUDA_DRIVER_FUNCS(BM_CUDA_MEMBER)
#undef BM_CUDA_MEMBER
  // Optional (CUDA 12.4+ drivers): lets the runtime check by-value argument sizes.
  decltype(&::cuFuncGetParamInfo) cuFuncGetParamInfo_ = nullptr;
  // Optional (CUDA 12.2+ drivers): keeps managed buffers in GPU memory (runtime_cuda.cpp).
  decltype(&::cuMemAdvise) cuMemAdvise_ = nullptr;
  int version = 0;  // cuDriverGetVersion: 12080 for 12.8
  int device_count = 0;
};

// The driver, loaded and initialised (cuInit) on first call; nullptr if there is none, with the
// reason in driver_status().
const Driver* driver();
std::string driver_status();

// "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)".
std::string error_text(CUresult r);
// Throws bm::Error "[cuda] <what>: <error_text>" unless r is CUDA_SUCCESS.
void check(CUresult r, const std::string& what);

}  // namespace bm::cuda
