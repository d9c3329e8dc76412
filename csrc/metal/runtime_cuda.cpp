// runtime.h implemented on the CUDA driver API (device "cuda:N"): the shaders, translated by the
// pre-pass's CUDA target and compiled by NVRTC when a kernel is first used, run on an NVIDIA GPU.
//
//   Buffer          managed memory (cuMemAllocManaged): one pointer valid on the host and the GPU,
//                   as Metal's shared storage; the backend reads it only after waiting for the work
//                   that wrote it. Needs a GPU with concurrent managed access (Linux, Pascal on).
//   Pipeline        a CUfunction, one module per .metal file, built the first time any of its
//                   kernels is asked for; parameters packed as csrc/cuda/abi.h describes.
//   CommandBuffer   records launches; commit() launches them in order on the device's one stream
//                   and records an event; wait_until_completed() waits for that event and reports
//                   a launch failure or kernel fault, every time it is called.
// Every entry point makes the device's primary context current first: any thread may call.
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "core/errors.h"
#include "cuda/abi.h"
#include "cuda/driver.h"
#include "cuda/module_cache.h"
#include "metal/runtime.h"
#include "msl_sim/launch.h"

namespace bm::metal {

namespace {

using cuda::check;
constexpr size_t kMaxBytes = 4096;                 // set_bytes limit, as Metal
constexpr size_t kMaxThreadgroupMemory = 32768;    // as Apple GPUs (and the simulator)
constexpr uint32_t kMaxThreads = 1024;

const cuda::Driver& drv() { return *cuda::driver(); }

// One device's context and stream, shared by its buffers, pipelines and command buffers.
struct Device {
  int ordinal = 0;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;  // the queue: launches run in submission order
  CUstream fill = nullptr;    // zero-fills new buffers without waiting for the queue
  std::string arch;           // "sm_90"
  std::string name;
  std::once_flag started;

  // Retains the primary context on first use: constructing the device costs nothing.
  void current() {
    std::call_once(started, [this] {
      check(drv().cuDevicePrimaryCtxRetain_(&ctx, dev), "cannot create a context on " + name);
      check(drv().cuCtxSetCurrent_(ctx), "cuCtxSetCurrent");
      check(drv().cuStreamCreate_(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
      check(drv().cuStreamCreate_(&fill, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    });
    check(drv().cuCtxSetCurrent_(ctx), "cuCtxSetCurrent");
  }
};

class CudaBuffer final : public Buffer {
 public:
  CudaBuffer(Device& d, size_t length) : length_(length) {
    d.current();
    // Managed memory can be oversubscribed, and a GPU asked for more than it has can stall (not
    // only this process): refuse what does not fit in free device memory, with a margin.
    size_t free_bytes = 0, total_bytes = 0;
    check(drv().cuMemGetInfo_(&free_bytes, &total_bytes), "cuMemGetInfo");
    constexpr size_t kMargin = size_t(256) << 20;
    if (length + kMargin > free_bytes)
      throw OutOfMemoryError("[cuda] cannot allocate a buffer of " + std::to_string(length) + " bytes on " + d.name +
                             ": " + std::to_string(free_bytes) + " bytes of its memory are free");
    CUresult r = drv().cuMemAllocManaged_(&ptr_, length, CU_MEM_ATTACH_GLOBAL);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      throw OutOfMemoryError("[cuda] cannot allocate a buffer of " + std::to_string(length) + " bytes on " + d.name);
    check(r, "cuMemAllocManaged of " + std::to_string(length) + " bytes");
    // Left to itself the driver may keep pages the host wrote in host memory and have kernels read
    // them over the bus (a 100M-element add ran at 1% of the GPU's bandwidth): the GPU is their
    // home, and the host's reads and writes migrate pages only when it touches them.
    if (drv().cuMemAdvise_) {
      CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, d.ordinal};
      drv().cuMemAdvise_(ptr_, length, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, loc);
    }
    // Zero-filled, as the contract says; on its own stream, so it waits for nothing queued.
    r = drv().cuMemsetD8Async_(ptr_, 0, length, d.fill);
    if (r == CUDA_SUCCESS) r = drv().cuStreamSynchronize_(d.fill);
    if (r != CUDA_SUCCESS) {
      drv().cuMemFree_(ptr_);
      check(r, "zero-filling a new buffer");
    }
  }
  ~CudaBuffer() override { drv().cuMemFree_(ptr_); }  // command buffers hold buffers until done
  void* contents() override { return reinterpret_cast<void*>(ptr_); }
  size_t length() const override { return length_; }
  CUdeviceptr device_address() const { return ptr_; }

 private:
  CUdeviceptr ptr_ = 0;
  size_t length_;
};

// One entry of a kernel's parameter list (abi.h): the launch struct, a pointer, or bytes by value.
struct Param {
  char kind;      // 'L', 'p', 'v'
  int slot = -1;  // buffer(N)
  size_t size = 0;  // by-value size from the driver (0 if it cannot say)
};

class CudaPipeline final : public Pipeline {
 public:
  CudaPipeline(std::string name, CUfunction f, uint32_t max_threads, std::vector<Param> params)
      : fn(f), params(std::move(params)), name_(std::move(name)), max_threads_(max_threads) {}
  const std::string& name() const override { return name_; }
  uint32_t max_total_threads_per_threadgroup() const override { return max_threads_; }
  uint32_t thread_execution_width() const override { return 32; }

  const CUfunction fn;
  const std::vector<Param> params;

 private:
  std::string name_;
  uint32_t max_threads_;
};

std::vector<Param> parse_params(const char* spec, const std::string& kernel) {
  std::vector<Param> out;
  std::istringstream in(spec ? spec : "");
  std::string tok;
  while (in >> tok) {
    Param p{tok[0]};
    if (p.kind == 'p' || p.kind == 'v') p.slot = std::stoi(tok.substr(1));
    else if (p.kind != 'L' || tok.size() != 1) throw Error("[cuda] kernel '" + kernel + "': bad parameter list '" + spec + "'");
    out.push_back(p);
  }
  if (out.empty() || out[0].kind != 'L') throw Error("[cuda] kernel '" + kernel + "' has no CUDA parameter list");
  return out;
}

// One recorded launch: the kernel, its geometry, its packed parameters and what keeps them alive.
struct Launch {
  const CudaPipeline* pipeline;
  unsigned grid[3], block[3];
  unsigned shared_bytes;
  std::vector<char> blob;        // parameter values, each at offsets[i]
  std::vector<size_t> offsets;
  std::vector<std::shared_ptr<Buffer>> keep;
};

struct Slot {
  std::shared_ptr<Buffer> buffer;
  size_t offset = 0;
  std::vector<char> bytes;
  enum { None, Buf, Bytes } kind = None;
};

uint32_t dim32(uint64_t v, const char* what) {
  if (v > 0xffffffffull) throw ValueError(std::string("[cuda] ") + what + " exceeds 2^32 - 1: " + std::to_string(v));
  return uint32_t(v);
}

void check_index(uint32_t index, const char* what) {
  if (index >= 31) throw ValueError(std::string("[cuda] ") + what + " index " + std::to_string(index) + " is past the last slot (30)");
}

class CudaEncoder final : public ComputeEncoder {
 public:
  void set_pipeline(const Pipeline& p) override { pipeline_ = static_cast<const CudaPipeline*>(&p); }

  void set_buffer(const std::shared_ptr<Buffer>& b, size_t offset, uint32_t index) override {
    check_index(index, "set_buffer");
    if (!b) throw ValueError("[cuda] set_buffer: null buffer at index " + std::to_string(index));
    if (offset > b->length())
      throw ValueError("[cuda] set_buffer: offset " + std::to_string(offset) + " past the end of a " +
                       std::to_string(b->length()) + "-byte buffer");
    Slot& s = slots_[index];
    s = Slot{b, offset, {}, Slot::Buf};
  }

  void set_bytes(const void* data, size_t length, uint32_t index) override {
    check_index(index, "set_bytes");
    if (length > kMaxBytes) throw ValueError("[cuda] set_bytes: " + std::to_string(length) + " bytes exceed the limit of 4096");
    Slot& s = slots_[index];
    s = Slot{nullptr, 0, std::vector<char>(static_cast<const char*>(data), static_cast<const char*>(data) + length), Slot::Bytes};
  }

  void set_threadgroup_memory_length(size_t length, uint32_t index) override {
    if (index >= BM_CUDA_MAX_TG_SLOTS)
      throw ValueError("[cuda] set_threadgroup_memory_length: index " + std::to_string(index) + " is past the last slot (" +
                       std::to_string(BM_CUDA_MAX_TG_SLOTS - 1) + ")");
    if (length % 16 != 0)
      throw ValueError("[cuda] set_threadgroup_memory_length: " + std::to_string(length) + " bytes is not a multiple of 16");
    if (length > kMaxThreadgroupMemory)
      throw ValueError("[cuda] set_threadgroup_memory_length: " + std::to_string(length) + " bytes exceed the maximum of " +
                       std::to_string(kMaxThreadgroupMemory));
    tg_len_[index] = length;
  }

  void dispatch_threads(Size3 grid, Size3 tg) override {
    uint32_t g[3] = {dim32(grid.width, "grid size"), dim32(grid.height, "grid size"), dim32(grid.depth, "grid size")};
    uint32_t t[3] = {dim32(tg.width, "threadgroup size"), dim32(tg.height, "threadgroup size"), dim32(tg.depth, "threadgroup size")};
    uint32_t groups[3];
    for (int i = 0; i < 3; ++i) groups[i] = t[i] ? (g[i] + t[i] - 1) / t[i] : 0;
    record(groups, t, g);
  }

  void dispatch_threadgroups(Size3 groups, Size3 tg) override {
    uint32_t n[3] = {dim32(groups.width, "threadgroup count"), dim32(groups.height, "threadgroup count"),
                     dim32(groups.depth, "threadgroup count")};
    uint32_t t[3] = {dim32(tg.width, "threadgroup size"), dim32(tg.height, "threadgroup size"), dim32(tg.depth, "threadgroup size")};
    uint32_t g[3] = {dim32(groups.width * tg.width, "grid size"), dim32(groups.height * tg.height, "grid size"),
                     dim32(groups.depth * tg.depth, "grid size")};
    record(n, t, g);
  }

  std::vector<Launch> recorded;

 private:
  void record(const uint32_t groups[3], const uint32_t t[3], const uint32_t g[3]) {
    if (!pipeline_) throw Error("[cuda] dispatch without a compute pipeline");
    const std::string who = "[cuda] kernel '" + pipeline_->name() + "': ";
    uint64_t threads = uint64_t(t[0]) * t[1] * t[2];
    if (threads == 0 || uint64_t(g[0]) * g[1] * g[2] == 0)
      throw ValueError(who + "empty dispatch: threadgroup size " + std::to_string(t[0]) + "x" + std::to_string(t[1]) + "x" +
                       std::to_string(t[2]) + ", grid " + std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" +
                       std::to_string(g[2]));
    if (threads > pipeline_->max_total_threads_per_threadgroup())
      throw ValueError(who + "a threadgroup of " + std::to_string(threads) + " threads exceeds the maximum of " +
                       std::to_string(pipeline_->max_total_threads_per_threadgroup()));
    if (groups[1] > 65535 || groups[2] > 65535)
      throw ValueError(who + "a grid of " + std::to_string(groups[1]) + " x " + std::to_string(groups[2]) +
                       " threadgroups in y x z exceeds CUDA's 65535 per dimension");
    Launch L{pipeline_, {groups[0], groups[1], groups[2]}, {t[0], t[1], t[2]}, 0, {}, {}, {}};
    BmCudaLaunch launch{};
    for (int i = 0; i < 3; ++i) launch.grid[i] = g[i];
    size_t shared = 0;
    for (int i = 0; i < BM_CUDA_MAX_TG_SLOTS; ++i) {
      launch.tg_offset[i] = unsigned(shared);
      shared += tg_len_[i];
    }
    if (shared > kMaxThreadgroupMemory)
      throw ValueError(who + std::to_string(shared) + " bytes of threadgroup memory exceed the maximum of " +
                       std::to_string(kMaxThreadgroupMemory));
    L.shared_bytes = unsigned(shared);
    auto append = [&L](const void* p, size_t n) {
      size_t at = (L.blob.size() + 15) / 16 * 16;
      L.blob.resize(at + n);
      std::memcpy(L.blob.data() + at, p, n);
      L.offsets.push_back(at);
    };
    for (const Param& p : pipeline_->params) {
      if (p.kind == 'L') {
        append(&launch, sizeof launch);
        continue;
      }
      const Slot& s = slots_[p.slot];
      const std::string slot = "buffer(" + std::to_string(p.slot) + ")";
      if (s.kind == Slot::None) throw Error(who + slot + " was not set");
      if (p.kind == 'p') {
        if (s.kind != Slot::Buf)
          throw Error(who + slot + " is a device pointer but was set with set_bytes (bind a buffer)");
        CUdeviceptr a = static_cast<CudaBuffer&>(*s.buffer).device_address() + s.offset;
        append(&a, sizeof a);
        L.keep.push_back(s.buffer);
      } else {
        if (s.kind != Slot::Bytes)
          throw Error(who + slot + " is a `constant T&` argument but was bound to a buffer (use set_bytes)");
        if (p.size && s.bytes.size() != p.size)
          throw ValueError(who + slot + " takes " + std::to_string(p.size) + " bytes; set_bytes gave " +
                           std::to_string(s.bytes.size()));
        append(s.bytes.data(), s.bytes.size());
      }
    }
    recorded.push_back(std::move(L));
  }

  const CudaPipeline* pipeline_ = nullptr;
  Slot slots_[31];
  size_t tg_len_[BM_CUDA_MAX_TG_SLOTS] = {};
};

class CudaCommandBuffer final : public CommandBuffer {
 public:
  explicit CudaCommandBuffer(Device& d) : dev_(d) {}
  ~CudaCommandBuffer() override {
    if (status_ != CommandStatus::Recording && !waited_) {
      try {
        wait_until_completed();  // the buffers it holds may be freed only once the GPU is done with them
      } catch (...) {
      }
    }
    if (event_) drv().cuEventDestroy_(event_);
  }

  ComputeEncoder& compute_encoder() override {
    if (status_ != CommandStatus::Recording) throw Error("[cuda] compute_encoder() after commit()");
    return encoder_;
  }

  void commit() override {
    if (status_ != CommandStatus::Recording) throw Error("[cuda] command buffer committed twice");
    status_ = CommandStatus::Committed;
    dev_.current();
    std::vector<void*> ptrs;
    for (Launch& L : encoder_.recorded) {
      ptrs.clear();
      for (size_t off : L.offsets) ptrs.push_back(L.blob.data() + off);
      CUresult r = drv().cuLaunchKernel_(L.pipeline->fn, L.grid[0], L.grid[1], L.grid[2], L.block[0], L.block[1], L.block[2],
                                         L.shared_bytes, dev_.stream, ptrs.data(), nullptr);
      if (r != CUDA_SUCCESS) {
        failure_ = "[cuda] launching kernel '" + L.pipeline->name() + "' failed: " + cuda::error_text(r);
        break;
      }
    }
    // Parameter values were copied at each launch; what stays is the buffers, until completion.
    CUresult r = drv().cuEventCreate_(&event_, CU_EVENT_DISABLE_TIMING);
    if (r == CUDA_SUCCESS) r = drv().cuEventRecord_(event_, dev_.stream);
    if (r != CUDA_SUCCESS && failure_.empty()) failure_ = "[cuda] recording a completion event failed: " + cuda::error_text(r);
  }

  void wait_until_completed() override {
    // Two threads synchronizing at once both wait here: without the lock both cleared `recorded`,
    // freeing its buffers twice (SIGSEGV/SIGBUS in the 8-thread test on an H200).
    std::lock_guard<std::mutex> lk(wait_m_);
    if (status_ == CommandStatus::Recording) throw Error("[cuda] wait_until_completed() before commit()");
    if (!waited_) {
      dev_.current();
      CUresult r = event_ ? drv().cuEventSynchronize_(event_) : CUDA_SUCCESS;
      if (r != CUDA_SUCCESS && failure_.empty()) failure_ = fault_message(r);
      waited_ = true;
      status_ = failure_.empty() ? CommandStatus::Completed : CommandStatus::Error;
      encoder_.recorded.clear();  // releases the buffers, as Metal does on completion
    }
    if (!failure_.empty()) throw Error(failure_);
  }

  CommandStatus status() const override {
    std::lock_guard<std::mutex> lk(wait_m_);
    if (status_ == CommandStatus::Committed && event_) {
      CUresult r = drv().cuEventQuery_(event_);
      if (r == CUDA_ERROR_NOT_READY) return CommandStatus::Committed;
      return r == CUDA_SUCCESS && failure_.empty() ? CommandStatus::Completed : CommandStatus::Error;
    }
    return status_;
  }

  std::string error() const override {
    std::lock_guard<std::mutex> lk(wait_m_);
    return failure_;
  }

 private:
  std::string fault_message(CUresult r) const {
    std::string names;
    size_t shown = 0;
    for (const Launch& L : encoder_.recorded) {
      if (names.find("'" + L.pipeline->name() + "'") != std::string::npos) continue;
      if (shown++ == 8) {
        names += ", ...";
        break;
      }
      names += (names.empty() ? "'" : ", '") + L.pipeline->name() + "'";
    }
    return "[cuda] a kernel failed on " + dev_.name + ": " + cuda::error_text(r) + "; this command buffer ran " + names +
           ". A fault leaves the CUDA context unusable: restart the process (compute-sanitizer names the kernel and "
           "address)";
  }

  Device& dev_;
  CudaEncoder encoder_;
  CommandStatus status_ = CommandStatus::Recording;
  CUevent event_ = nullptr;
  bool waited_ = false;
  std::string failure_;
  mutable std::mutex wait_m_;  // guards the state wait_until_completed changes
};

class CudaRuntime final : public Runtime {
 public:
  explicit CudaRuntime(int ordinal) {
    d_.ordinal = ordinal;
    check(drv().cuDeviceGet_(&d_.dev, ordinal), "cuDeviceGet");
    char name[256] = {};
    drv().cuDeviceGetName_(name, sizeof name, d_.dev);
    int major = 0, minor = 0;
    drv().cuDeviceGetAttribute_(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d_.dev);
    drv().cuDeviceGetAttribute_(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d_.dev);
    d_.arch = "sm_" + std::to_string(major) + std::to_string(minor);
    d_.name = std::string(name) + " (cuda:" + std::to_string(ordinal) + ")";
    label_ = std::string(name) + ", " + d_.arch;
  }

  ~CudaRuntime() override {
    // The process is ending (devices live in a never-destroyed registry); nothing to release.
  }

  std::string name() const override { return label_ + ", NVRTC"; }
  uint32_t max_threads_per_threadgroup() const override { return kMaxThreads; }

  std::shared_ptr<Buffer> new_buffer(size_t length) override {
    if (length == 0) throw ValueError("[cuda] new_buffer: length must be positive");
    return std::make_shared<CudaBuffer>(d_, length);
  }

  const Pipeline& pipeline(const std::string& kernel) override {
    std::lock_guard<std::mutex> lk(m_);
    auto it = pipelines_.find(kernel);
    if (it != pipelines_.end()) return *it->second;
    const msl::KernelInfo* k = msl::find_kernel(kernel);
    if (!k) {
      throw Error("[cuda] no kernel named '" + kernel + "' in the shader library (" + std::to_string(msl::kernel_names().size()) +
                  " kernels); is it instantiated with [[host_name(\"" + kernel + "\")]]?");
    }
    load_module(k->source);
    it = pipelines_.find(kernel);
    if (it == pipelines_.end()) throw Error("[cuda] kernel '" + kernel + "' is missing from the module of " + k->source);
    return *it->second;
  }

  std::unique_ptr<CommandBuffer> new_command_buffer() override { return std::make_unique<CudaCommandBuffer>(d_); }

 private:
  // Compiles one .metal file's CUDA translation (all its kernels) and makes a pipeline of each.
  void load_module(const std::string& file) {
    if (modules_.count(file)) return;
    std::vector<const msl::KernelInfo*> kernels;
    std::vector<std::string> exprs;
    for (const std::string& n : msl::kernel_names()) {
      const msl::KernelInfo* k = msl::find_kernel(n);
      if (k && k->source == file && k->cuda_name) {
        kernels.push_back(k);
        exprs.push_back(k->cuda_name);
      }
    }
    cuda::CompiledModule cm = cuda::cached_compile(file, exprs, d_.arch);
    d_.current();
    CUmodule mod = nullptr;
    check(drv().cuModuleLoadData_(&mod, cm.image.data()), "loading the module of " + file);
    modules_[file] = mod;
    for (const msl::KernelInfo* k : kernels) {
      auto lo = cm.lowered.find(k->cuda_name);
      if (lo == cm.lowered.end()) throw Error(std::string("[cuda] NVRTC did not resolve ") + k->cuda_name);
      CUfunction f = nullptr;
      check(drv().cuModuleGetFunction_(&f, mod, lo->second.c_str()), std::string("kernel '") + k->host_name + "'");
      int max_threads = 0;
      drv().cuFuncGetAttribute_(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
      uint32_t limit = std::min<uint32_t>(k->max_threads ? k->max_threads : kMaxThreads, uint32_t(max_threads));
      std::vector<Param> params = parse_params(k->cuda_params, k->host_name);
      if (drv().cuFuncGetParamInfo_) {
        for (size_t i = 0; i < params.size(); ++i) {
          size_t off = 0, size = 0;
          if (drv().cuFuncGetParamInfo_(f, i, &off, &size) == CUDA_SUCCESS) params[i].size = size;
        }
        if (params[0].size && params[0].size != sizeof(BmCudaLaunch))
          throw Error(std::string("[cuda] kernel '") + k->host_name + "': its launch argument has " +
                      std::to_string(params[0].size) + " bytes, the runtime's BmCudaLaunch " + std::to_string(sizeof(BmCudaLaunch)));
      }
      for (Param& p : params)
        if (p.kind != 'v') p.size = 0;  // sizes are checked for by-value arguments only
      pipelines_.emplace(k->host_name, std::make_unique<CudaPipeline>(k->host_name, f, limit, std::move(params)));
    }
  }

  Device d_;
  std::string label_;
  std::mutex m_;
  std::map<std::string, CUmodule> modules_;
  std::map<std::string, std::unique_ptr<CudaPipeline>> pipelines_;
};

}  // namespace

std::unique_ptr<Runtime> make_cuda_runtime(int ordinal) { return std::make_unique<CudaRuntime>(ordinal); }

int cuda_device_count() {
  const cuda::Driver* d = cuda::driver();
  if (!d) return 0;
  int usable = 0;
  for (int i = 0; i < d->device_count; ++i) {
    CUdevice dev = 0;
    int concurrent = 0;
    if (d->cuDeviceGet_(&dev, i) != CUDA_SUCCESS) break;
    d->cuDeviceGetAttribute_(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev);
    if (!concurrent) break;  // the host could not read results while other kernels run
    ++usable;
  }
  return usable;
}

}  // namespace bm::metal
