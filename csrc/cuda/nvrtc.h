// NVRTC, opened at run time (libnvrtc.so.13 / .12, or the path in BESSEMER_NVRTC), compiling the
// shaders' CUDA translations (csrc/cuda/sources.h) to PTX or CUBIN. Used by runtime_cuda.cpp at load
// time and by CI's compile check, which has NVRTC but no GPU.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace bm::cuda {

struct CompiledModule {
  std::string image;    // CUBIN for arch "sm_XY", PTX for "compute_XY"
  bool is_cubin = false;
  std::map<std::string, std::string> lowered;  // name expression -> mangled name in the image
  std::string log;      // the compiler's warnings, if any
};

// The options every shader is compiled with (floating point: docs/cuda.md says why).
std::vector<std::string> nvrtc_options(const std::string& arch);

// Compiles the CUDA translation of one shader file (as KernelInfo::source names it) and resolves
// `name_exprs` (KernelInfo::cuda_name of its kernels). Throws bm::Error with NVRTC's log, naming
// the .metal file and line, if the source does not compile; bm::Error saying what is missing if
// NVRTC cannot be loaded.
CompiledModule compile_shader_file(const std::string& file, const std::vector<std::string>& name_exprs,
                                   const std::string& arch);

// Compiles arbitrary CUDA source (tests: the controls that must fail).
CompiledModule compile_source(const std::string& name, const std::string& source,
                              const std::vector<std::string>& name_exprs, const std::string& arch);

// True if NVRTC can be loaded; otherwise `why` says what was tried.
bool nvrtc_available(std::string* why);
// NVRTC's version as major * 1000 + minor * 10 (12080 for 12.8), 0 if unavailable.
int nvrtc_version();

}  // namespace bm::cuda
