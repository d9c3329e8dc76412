#include "cuda/driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "core/errors.h"

namespace bm::cuda {

namespace {

// cuda.h maps some names to versioned symbols with macros; stringizing after expansion gives the
// symbol the driver exports under that name.
#define BM_CUDA_STR2(x) #x
#define BM_CUDA_SYM(f) BM_CUDA_STR2(f)

struct Loaded {
  Driver d;
  bool ok = false;
  std::string status;
};

Loaded load() {
  Loaded L;
  const char* env = std::getenv("BESSEMER_CUDA_DRIVER");  // tests: point at a library that is not there
  const char* path = env && *env ? env : "libcuda.so.1";
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    L.status = std::string("no NVIDIA driver: cannot load ") + path + " (" + (e ? e : "unknown error") + ")";
    return L;
  }
  // Never dlclose: kernels, streams and contexts live until the process ends.
#define BM_CUDA_LOAD(f)                                                                           \
  L.d.f##_ = reinterpret_cast<decltype(L.d.f##_)>(dlsym(h, BM_CUDA_SYM(f)));                    \
  if (!L.d.f##_) {                                                                               \
    L.status = std::string("the NVIDIA driver lacks ") + BM_CUDA_SYM(f) + " (driver too old?)"; \
    return L;                                                                                    \
  }
  BM_CUDA_DRIVER_FUNCS(BM_CUDA_LOAD)
#undef BM_CUDA_LOAD
  L.d.cuFuncGetParamInfo_ = reinterpret_cast<decltype(L.d.cuFuncGetParamInfo_)>(dlsym(h, "cuFuncGetParamInfo"));
  L.d.cuMemAdvise_ = reinterpret_cast<decltype(L.d.cuMemAdvise_)>(dlsym(h, BM_CUDA_SYM(cuMemAdvise)));
  CUresult r = L.d.cuInit_(0);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    L.d.cuGetErrorName_(r, &name);
    L.status = std::string("the NVIDIA driver found no usable GPU (cuInit: ") + (name ? name : "error") + ")";
    return L;
  }
  L.d.cuDriverGetVersion_(&L.d.version);
  if (L.d.cuDeviceGetCount_(&L.d.device_count) != CUDA_SUCCESS || L.d.device_count == 0) {
    L.status = "the NVIDIA driver reports no GPU";
    return L;
  }
  L.ok = true;
  L.status = "NVIDIA driver " + std::to_string(L.d.version / 1000) + "." + std::to_string(L.d.version % 1000 / 10) +
             ", " + std::to_string(L.d.device_count) + " GPU(s)";
  return L;
}

const Loaded& loaded() {
  static const Loaded L = load();
  return L;
}

}  // namespace

const Driver* driver() { return loaded().ok ? &loaded().d : nullptr; }

std::string driver_status() { return loaded().status; }

std::string error_text(CUresult r) {
  const Driver* d = &loaded().d;
  const char* name = nullptr;
  const char* text = nullptr;
  if (d->cuGetErrorName_) d->cuGetErrorName_(r, &name);
  if (d->cuGetErrorString_) d->cuGetErrorString_(r, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(int(r));
  if (text) s += std::string(" (") + text + ")";
  return s;
}

void check(CUresult r, const std::string& what) {
  if (r != CUDA_SUCCESS) throw Error("[cuda] " + what + ": " + error_text(r));
}

}  // namespace bm::cuda
