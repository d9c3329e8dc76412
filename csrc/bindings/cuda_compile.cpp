// The CUDA target's compile check (CI has the CUDA toolkit and NVRTC but no GPU; docs/cuda.md):
// every embedded shader translation through NVRTC, every registered kernel's name expression
// resolved. Built only with the CUDA target (BESSEMER_HAVE_CUDA); otherwise these names are absent.
#include "bindings/common.h"

#ifdef BESSEMER_HAVE_CUDA
#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "core/errors.h"
#include "cuda/module_cache.h"
#include "cuda/nvrtc.h"
#include "cuda/sources.h"
#include "msl_sim/launch.h"
#endif

namespace bm::bind {

#ifdef BESSEMER_HAVE_CUDA
namespace {

// Registered kernels by the file they come from (KernelInfo::source).
std::map<std::string, std::vector<const msl::KernelInfo*>> kernels_by_file() {
  std::map<std::string, std::vector<const msl::KernelInfo*>> r;
  for (const std::string& name : msl::kernel_names()) {
    const msl::KernelInfo* k = msl::find_kernel(name);
    if (k->cuda_name) r[k->source].push_back(k);  // as runtime_cuda.cpp's load_module
  }
  return r;
}

// NVRTC from the nvidia-cuda-nvrtc wheel, if installed (python/bessemer/_nvrtc.py).
void preload_nvrtc() { py::module_::import("bessemer._nvrtc").attr("preload")(); }

struct FileResult {
  std::string file;
  size_t kernels = 0;
  double seconds = 0;
  std::string error;
};

FileResult compile_file(const std::string& file, const std::vector<const msl::KernelInfo*>& ks,
                        const std::string& arch, bool cache) {
  FileResult r{file, ks.size(), 0, ""};
  std::vector<std::string> exprs;
  for (const msl::KernelInfo* k : ks) exprs.push_back(k->cuda_name);
  auto t0 = std::chrono::steady_clock::now();
  try {
    // cache: through the module cache, with the name list runtime_cuda.cpp's load_module uses (every
    // kernel of the file, in kernel_names() order), so a GPU machine's test workers find it warm.
    cuda::CompiledModule m = cache ? cuda::cached_compile(file, exprs, arch) : cuda::compile_shader_file(file, exprs, arch);
    for (const msl::KernelInfo* k : ks) {
      const std::string& low = m.lowered.at(k->cuda_name);
      if (low.empty() || m.image.find(low) == std::string::npos)
        throw Error("[cuda] kernel '" + std::string(k->host_name) + "' (" + k->cuda_name + ") lowered to '" + low +
                    "', which the compiled image of " + file + " does not contain");
    }
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace
#endif

void init_cuda_compile(py::module_& m) {
#ifdef BESSEMER_HAVE_CUDA
  m.def("_cuda_nvrtc_status", [] {
    preload_nvrtc();
    std::string why;
    bool ok = cuda::nvrtc_available(&why);
    return py::make_tuple(ok, cuda::nvrtc_version(), why);
  }, "(available, version as major*1000+minor*10, why not) of NVRTC.");
  m.def("_cuda_nvrtc_options", &cuda::nvrtc_options, py::arg("arch"));
  m.def("_cuda_shader_files", [] {
    size_t n = 0;
    const cuda::ShaderSource* s = cuda::shader_sources(&n);
    std::vector<std::string> files;
    for (size_t i = 0; i < n; ++i) files.push_back(s[i].file);
    return files;
  }, "The .metal files whose CUDA translation is embedded.");
  m.def("_cuda_shader_source", [](const std::string& file) -> py::object {
    const char* t = cuda::shader_source(file.c_str());
    if (!t) return py::none();
    return py::str(t);
  }, py::arg("file"));
  m.def("_cuda_kernels", [] {
    py::list out;
    for (const std::string& name : msl::kernel_names()) {
      const msl::KernelInfo* k = msl::find_kernel(name);
      out.append(py::make_tuple(k->host_name, k->source, k->cuda_name, k->cuda_params));
    }
    return out;
  }, "(host name, source file, CUDA name expression, CUDA parameter layout) of every registered kernel.");
  // Compiles every embedded file (or `files`) for `arch` with the name expressions of the kernels
  // registered from it, on `jobs` threads (0: one per CPU). Raises bm::Error listing every failure.
  m.def("_cuda_compile_shaders", [](const std::string& arch, const std::vector<std::string>& files, int jobs,
                                    bool cache) {
    preload_nvrtc();
    std::vector<std::string> pending = files;
    if (pending.empty()) {
      size_t n = 0;
      const cuda::ShaderSource* s = cuda::shader_sources(&n);
      for (size_t i = 0; i < n; ++i) pending.push_back(s[i].file);
    }
    auto by_file = kernels_by_file();
    std::vector<FileResult> results(pending.size());
    {
      py::gil_scoped_release nogil;
      size_t workers = jobs > 0 ? size_t(jobs) : std::max(1u, std::thread::hardware_concurrency());
      workers = std::min(workers, pending.size());
      std::mutex mu;
      size_t next = 0;
      auto work = [&] {
        for (;;) {
          size_t i;
          {
            std::lock_guard<std::mutex> lock(mu);
            if (next >= pending.size()) return;
            i = next++;
          }
          results[i] = compile_file(pending[i], by_file[pending[i]], arch, cache);
        }
      };
      std::vector<std::thread> pool;
      for (size_t w = 1; w < workers; ++w) pool.emplace_back(work);
      work();
      for (std::thread& t : pool) t.join();
    }
    std::string errors;
    py::list out;
    for (const FileResult& r : results) {
      if (!r.error.empty()) errors += (errors.empty() ? "" : "\n") + r.error;
      out.append(py::make_tuple(r.file, r.kernels, r.seconds));
    }
    if (!errors.empty()) throw Error(errors);
    return out;
  }, py::arg("arch"), py::arg("files") = std::vector<std::string>{}, py::arg("jobs") = 0, py::arg("cache") = false,
     "[(file, kernel count, seconds)] after compiling the embedded CUDA translations with NVRTC.");
  // Compiles any source (the controls that must fail); returns (is_cubin, image size, lowered names, log).
  m.def("_cuda_compile_source", [](const std::string& name, const std::string& text, const std::string& arch,
                                   const std::vector<std::string>& name_exprs) {
    preload_nvrtc();
    cuda::CompiledModule mod;
    {
      py::gil_scoped_release nogil;
      mod = cuda::compile_source(name, text, name_exprs, arch);
    }
    return py::make_tuple(mod.is_cubin, mod.image.size(), mod.lowered, mod.log);
  }, py::arg("name"), py::arg("text"), py::arg("arch"), py::arg("name_exprs") = std::vector<std::string>{});
#else
  (void)m;
#endif
}

}  // namespace bm::bind
