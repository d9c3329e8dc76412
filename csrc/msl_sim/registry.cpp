// Host name -> kernel. Generated shader code registers each kernel instantiation from a static
// object, so the table is complete before main(); a name defined twice is remembered and reported
// when looked up (static initialisation cannot throw).
#include <map>
#include <string>
#include <vector>

#include "core/errors.h"
#include "msl_sim/launch.h"

namespace bm::msl {

namespace {
struct Registry {
  std::map<std::string, KernelInfo> kernels;
  std::map<std::string, std::string> duplicates;  // name -> where it is defined
};
Registry& registry() {
  static Registry r;
  return r;
}
}  // namespace

KernelRegistration::KernelRegistration(const char* host_name, Trampoline fn, bool needs_fibers,
                                       uint32_t max_threads, const char* source, const char* cuda_name,
                                       const char* cuda_params) {
  Registry& r = registry();
  KernelInfo info{host_name, fn,        needs_fibers, max_threads ? max_threads : kMaxThreadsPerGroup,
                  source,    cuda_name, cuda_params};
  auto [it, inserted] = r.kernels.emplace(host_name, info);
  if (!inserted) r.duplicates[host_name] = std::string(it->second.source) + " and " + source;
}

const KernelInfo* find_kernel(const std::string& host_name) {
  Registry& r = registry();
  auto dup = r.duplicates.find(host_name);
  if (dup != r.duplicates.end())
    throw Error("[msl-sim] kernel host name '" + host_name + "' is defined twice: in " + dup->second);
  auto it = r.kernels.find(host_name);
  return it == r.kernels.end() ? nullptr : &it->second;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (auto& [name, info] : registry().kernels) names.push_back(name);
  return names;
}

}  // namespace bm::msl
