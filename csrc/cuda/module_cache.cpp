#include "cuda/module_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cuda/sources.h"

namespace bm::cuda {

namespace {

// FNV-1a, 64 bits: stable across runs and builds (std::hash need not be).
uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string cache_dir() {
  const char* off = std::getenv("BESSEMER_CUDA_CACHE");
  if (off && std::string(off) == "0") return "";
  if (const char* d = std::getenv("BESSEMER_CACHE_DIR"); d && *d) return std::string(d) + "/cuda";
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/bessemer/cuda";
  if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/bessemer/cuda";
  return "";
}

bool make_dirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      std::string p = path.substr(0, i);
      if (mkdir(p.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
  }
  return true;
}

// Entry format: "bmcuda1\n", then per name expression "expr\tlowered\n", an empty line, then the image.
bool read_entry(const std::string& path, CompiledModule* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string line;
  if (!std::getline(in, line) || line != "bmcuda1") return false;
  while (std::getline(in, line) && !line.empty()) {
    size_t tab = line.find('\t');
    if (tab == std::string::npos) return false;
    out->lowered[line.substr(0, tab)] = line.substr(tab + 1);
  }
  std::ostringstream rest;
  rest << in.rdbuf();
  out->image = rest.str();
  out->is_cubin = true;
  return !out->image.empty();
}

void write_entry(const std::string& dir, const std::string& path, const CompiledModule& m) {
  if (!make_dirs(dir)) return;  // a read-only home: compile every time, silently
  std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) return;
    out << "bmcuda1\n";
    for (auto& [expr, low] : m.lowered) out << expr << '\t' << low << '\n';
    out << '\n';
    out.write(m.image.data(), std::streamsize(m.image.size()));
    if (!out) {
      std::remove(tmp.c_str());
      return;
    }
  }
  std::rename(tmp.c_str(), path.c_str());  // atomic: concurrent workers never read half an entry
}

}  // namespace

CompiledModule cached_compile(const std::string& file, const std::vector<std::string>& name_exprs,
                              const std::string& arch) {
  std::string dir = cache_dir();
  const char* text = shader_source(file.c_str());
  if (dir.empty() || !text || arch.rfind("sm_", 0) != 0) return compile_shader_file(file, name_exprs, arch);
  uint64_t h = fnv1a(text);
  for (const std::string& o : nvrtc_options(arch)) h = fnv1a(o + "\n", h);
  for (const std::string& e : name_exprs) h = fnv1a(e + "\n", h);
  h = fnv1a(arch + "/" + std::to_string(nvrtc_version()), h);
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.cubin", static_cast<unsigned long long>(h));
  std::string path = dir + "/" + name;
  CompiledModule m;
  if (read_entry(path, &m) && m.lowered.size() == name_exprs.size()) return m;
  m = compile_shader_file(file, name_exprs, arch);
  if (m.is_cubin) write_entry(dir, path, m);
  return m;
}

}  // namespace bm::cuda
