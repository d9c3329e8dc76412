// NVRTC opened at run time (csrc/cuda/nvrtc.h). The build needs no nvrtc.h: the few entry points
// used are declared here, with NVRTC's C ABI (nvrtcResult is an int-sized enum, nvrtcProgram an
// opaque pointer).
//
// The library is found as: $BESSEMER_NVRTC (a path), else by soname libnvrtc.so.13, .so.12, .so.
// A soname finds a copy the process already loaded: python/bessemer/_nvrtc.py preloads the one of
// the nvidia-cuda-nvrtc wheel (and its libnvrtc-builtins) with RTLD_GLOBAL before the first compile.
#include "cuda/nvrtc.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "core/errors.h"
#include "cuda/sources.h"

namespace bm::cuda {

namespace {

using nvrtcProgram = void*;
using nvrtcResult = int;

struct Api {
  void* lib = nullptr;
  std::string why;  // what failed, when lib is null
  nvrtcResult (*Version)(int*, int*) = nullptr;
  const char* (*GetErrorString)(nvrtcResult) = nullptr;
  nvrtcResult (*CreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                               const char* const*) = nullptr;
  nvrtcResult (*DestroyProgram)(nvrtcProgram*) = nullptr;
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetPTX)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*AddNameExpression)(nvrtcProgram, const char*) = nullptr;
  nvrtcResult (*GetLoweredName)(nvrtcProgram, const char*, const char**) = nullptr;
};

template <class F>
bool bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

Api load() {
  Api a;
  std::vector<std::string> names;
  if (const char* env = std::getenv("BESSEMER_NVRTC"); env && *env) names.push_back(env);
  for (const char* n : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) names.push_back(n);
  std::string tried;
  for (const std::string& n : names) {
    a.lib = dlopen(n.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (a.lib) break;
    const char* e = dlerror();
    tried += "\n  " + n + ": " + (e ? e : "not found");
  }
  if (!a.lib) {
    a.why = "[cuda] NVRTC (the CUDA runtime compiler) cannot be loaded; tried:" + tried +
            "\n(pip install nvidia-cuda-nvrtc, or set BESSEMER_NVRTC to libnvrtc.so's path)";
    return a;
  }
  bool ok = bind(a.lib, "nvrtcVersion", a.Version) && bind(a.lib, "nvrtcGetErrorString", a.GetErrorString) &&
            bind(a.lib, "nvrtcCreateProgram", a.CreateProgram) &&
            bind(a.lib, "nvrtcDestroyProgram", a.DestroyProgram) &&
            bind(a.lib, "nvrtcCompileProgram", a.CompileProgram) &&
            bind(a.lib, "nvrtcGetProgramLogSize", a.GetProgramLogSize) &&
            bind(a.lib, "nvrtcGetProgramLog", a.GetProgramLog) && bind(a.lib, "nvrtcGetPTXSize", a.GetPTXSize) &&
            bind(a.lib, "nvrtcGetPTX", a.GetPTX) && bind(a.lib, "nvrtcAddNameExpression", a.AddNameExpression) &&
            bind(a.lib, "nvrtcGetLoweredName", a.GetLoweredName);
  // CUBIN output appeared in NVRTC 11.1; without it only compute_XY (PTX) targets work.
  bind(a.lib, "nvrtcGetCUBINSize", a.GetCUBINSize);
  bind(a.lib, "nvrtcGetCUBIN", a.GetCUBIN);
  if (!ok) {
    a.why = "[cuda] the NVRTC library found lacks an entry point bessemer needs (too old?)";
    dlclose(a.lib);
    a.lib = nullptr;
  }
  return a;
}

const Api& api() {
  static std::once_flag once;
  static Api a;
  std::call_once(once, [] { a = load(); });
  return a;
}

const Api& require() {
  const Api& a = api();
  if (!a.lib) throw Error(a.why);
  return a;
}

std::string err(const Api& a, nvrtcResult r) {
  const char* s = a.GetErrorString(r);
  return s ? s : ("NVRTC error " + std::to_string(r));
}

// Destroys the program on every path out of compile().
struct Program {
  const Api& a;
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) a.DestroyProgram(&p);
  }
};

std::string program_log(const Api& a, nvrtcProgram p) {
  size_t n = 0;
  if (a.GetProgramLogSize(p, &n) != 0 || n <= 1) return "";
  std::string log(n, '\0');
  if (a.GetProgramLog(p, log.data()) != 0) return "";
  log.resize(n - 1);  // the terminating NUL
  return log;
}

}  // namespace

std::vector<std::string> nvrtc_options(const std::string& arch) {
  return {
      "-default-device",   // functions without an execution space are device functions
      "--std=c++17",
      "-arch=" + arch,     // sm_XY: CUBIN for that GPU; compute_XY: PTX the driver compiles
      "--fmad=false",      // a * b + c rounds twice, as on the CPU and in the simulator
      "-ftz=false",        // subnormals are kept
      "-prec-div=true",    // correctly rounded division
      "-prec-sqrt=true",   // correctly rounded sqrt
      "-lineinfo",         // compute-sanitizer and profilers name shaders/x.metal:line
  };
}

bool nvrtc_available(std::string* why) {
  const Api& a = api();
  if (!a.lib && why) *why = a.why;
  return a.lib != nullptr;
}

int nvrtc_version() {
  const Api& a = api();
  int major = 0, minor = 0;
  if (!a.lib || a.Version(&major, &minor) != 0) return 0;
  return major * 1000 + minor * 10;
}

CompiledModule compile_source(const std::string& name, const std::string& source,
                              const std::vector<std::string>& name_exprs, const std::string& arch) {
  const Api& a = require();
  const bool cubin = arch.rfind("sm_", 0) == 0;
  if (!cubin && arch.rfind("compute_", 0) != 0)
    throw ValueError("[cuda] arch must be sm_XY (CUBIN) or compute_XY (PTX), got '" + arch + "'");
  if (cubin && !a.GetCUBIN)
    throw Error("[cuda] this NVRTC cannot produce CUBIN (" + arch + "); use compute_XY for PTX");
  Program prog{a};
  nvrtcResult r = a.CreateProgram(&prog.p, source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (r != 0) throw Error("[cuda] nvrtcCreateProgram failed for " + name + ": " + err(a, r));
  for (const std::string& e : name_exprs) {
    r = a.AddNameExpression(prog.p, e.c_str());
    if (r != 0) throw Error("[cuda] nvrtcAddNameExpression(" + e + ") failed: " + err(a, r));
  }
  std::vector<std::string> opts = nvrtc_options(arch);
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  r = a.CompileProgram(prog.p, int(argv.size()), argv.data());
  CompiledModule m;
  m.log = program_log(a, prog.p);
  if (r != 0) {
    // The #line markers make NVRTC's messages name the .metal sources: "shaders/x.metal(12): error: ...".
    throw Error("[cuda] NVRTC could not compile " + name + " for " + arch + " (" + err(a, r) + "):\n" + m.log);
  }
  size_t n = 0;
  r = cubin ? a.GetCUBINSize(prog.p, &n) : a.GetPTXSize(prog.p, &n);
  if (r != 0) throw Error("[cuda] cannot get the compiled image of " + name + ": " + err(a, r));
  m.image.assign(n, '\0');
  r = cubin ? a.GetCUBIN(prog.p, m.image.data()) : a.GetPTX(prog.p, m.image.data());
  if (r != 0) throw Error("[cuda] cannot get the compiled image of " + name + ": " + err(a, r));
  if (!cubin && !m.image.empty() && m.image.back() == '\0') m.image.pop_back();  // PTX: text
  m.is_cubin = cubin;
  for (const std::string& e : name_exprs) {
    const char* lowered = nullptr;
    r = a.GetLoweredName(prog.p, e.c_str(), &lowered);
    if (r != 0 || !lowered)
      throw Error("[cuda] " + name + ": no lowered name for '" + e + "': " + err(a, r));
    m.lowered[e] = lowered;
  }
  return m;
}

CompiledModule compile_shader_file(const std::string& file, const std::vector<std::string>& name_exprs,
                                   const std::string& arch) {
  const char* text = shader_source(file.c_str());
  if (!text) throw Error("[cuda] no CUDA translation of '" + file + "' is embedded in this build");
  return compile_source(file, text, name_exprs, arch);
}

}  // namespace bm::cuda
