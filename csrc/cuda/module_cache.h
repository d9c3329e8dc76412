// Compiled shader modules kept on disk, so NVRTC runs once per shader file, GPU architecture and
// NVRTC version rather than once per process (a suite run with 12 workers would otherwise compile
// every file 12 times). Directory: $BESSEMER_CACHE_DIR/cuda, else $XDG_CACHE_HOME/bessemer/cuda,
// else ~/.cache/bessemer/cuda; BESSEMER_CUDA_CACHE=0 turns it off. An entry's name is a hash of
// everything that decides its content, so a changed shader or toolchain never reads a stale one.
#pragma once
#include <string>
#include <vector>

#include "cuda/nvrtc.h"

namespace bm::cuda {

// compile_shader_file, through the cache.
CompiledModule cached_compile(const std::string& file, const std::vector<std::string>& name_exprs,
                              const std::string& arch);

}  // namespace bm::cuda
