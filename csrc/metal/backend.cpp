#include "metal/backend.h"

#include <algorithm>
#include <cstdlib>

#include "core/device.h"
#include "core/errors.h"
#include "metal/kernels.h"

namespace bm::metal {

namespace {
constexpr size_t kCacheLimit = size_t(2) << 30;

size_t round_size(size_t n) {
  if (n < 16) return 16;  // Metal cannot make empty buffers
  if (n < 4096) return (n + 255) / 256 * 256;
  return (n + 4095) / 4096 * 4096;
}
}  // namespace

MetalBackend::MetalBackend(std::unique_ptr<Runtime> rt, std::string label) : rt_(std::move(rt)), label_(std::move(label)) {
  register_copy_kernels(*this);
  register_elementwise_kernels(*this);
  register_reduce_kernels(*this);
  register_matmul_kernels(*this);
  register_random_kernels(*this);
  register_pool_kernels(*this);
  register_norm_kernels(*this);
  register_nn_misc_kernels(*this);
  register_conv_kernels(*this);
  register_softmax_backward_kernels(*this);
  register_norm_backward_kernels(*this);
  register_optim_kernels(*this);
  register_index_kernels(*this);
  register_scan_kernels(*this);
  register_math_kernels(*this);
}

MetalBackend::~MetalBackend() = default;

const std::shared_ptr<Buffer>& MetalBackend::buffer_of(const Storage& s) {
  return *static_cast<std::shared_ptr<Buffer>*>(s.handle);
}

MetalBackend& backend_of(const Tensor& t) { return *static_cast<MetalBackend*>(t.device()->backend); }

std::shared_ptr<Storage> MetalBackend::allocate(size_t nbytes) { return allocate_impl(nbytes, false); }

// Without this a loop of `c = a + b` on 400 MB tensors made a new GPU buffer per iteration (the
// previous ones were still bound in the recording command buffer), and first-touching fresh pages
// cost ~40x the add itself. Reuse is safe for kernel outputs: the one queue runs in order, so the
// kernels still using the old contents run before the kernel that overwrites them.
std::shared_ptr<Storage> MetalBackend::allocate_kernel_output(size_t nbytes) { return allocate_impl(nbytes, true); }

std::shared_ptr<Storage> MetalBackend::allocate_impl(size_t nbytes, bool queued_use_ok) {
  const size_t n = round_size(nbytes);
  try {
    mem_.reserve(n, nbytes);
  } catch (const OutOfMemoryError&) {
    drop_cache();  // past the limit: give the idle buffers back before raising
    throw;
  }
  std::shared_ptr<Buffer> buf;
  try {
    {
      std::lock_guard<std::mutex> lk(m_);
      auto range = cache_.equal_range(n);
      for (auto it = range.first; it != range.second; ++it) {
        if (queued_use_ok || it->second.use_count() == 1) {  // else: no command buffer may hold it
          buf = it->second;
          cached_bytes_ -= n;
          cache_.erase(it);
          break;
        }
      }
    }
    if (buf) {
      mem_.cache_hit(n);
    } else {
      if (mem_.cache_over_limit()) {  // keep what the device holds (in use + cached) within the limit
        mem_.count_retry();
        drop_cache();
      }
      try {
        buf = rt_->new_buffer(n);
      } catch (const OutOfMemoryError&) {
        mem_.count_retry();
        drop_cache();
      }
      if (!buf) {
        try {
          buf = rt_->new_buffer(n);
        } catch (const OutOfMemoryError&) {
          mem_.unreserve(n, nbytes);
          mem_.system_refused(n, nbytes);
        }
      }
    }
  } catch (const OutOfMemoryError&) {
    throw;  // already accounted for
  } catch (...) {
    mem_.unreserve(n, nbytes);
    throw;
  }
  auto s = std::make_shared<Storage>();
  s->device = device;
  s->nbytes = nbytes;
  s->data = buf->contents();
  s->handle = new std::shared_ptr<Buffer>(std::move(buf));
  s->release = [this](Storage& st) { release(st); };
  return s;
}

void MetalBackend::release(Storage& s) {
  auto* holder = static_cast<std::shared_ptr<Buffer>*>(s.handle);
  std::shared_ptr<Buffer> buf = std::move(*holder);
  delete holder;
  const size_t n = round_size(s.nbytes);  // the size reserve() counted; the buffer's length
  std::lock_guard<std::mutex> lk(m_);
  const bool keep = cached_bytes_ + n <= kCacheLimit;
  if (keep) {
    cache_.emplace(n, std::move(buf));
    cached_bytes_ += n;
  }
  mem_.release(n, s.nbytes, keep);
}

void MetalBackend::drop_cache() {
  std::multimap<size_t, std::shared_ptr<Buffer>> dropped;
  {
    std::lock_guard<std::mutex> lk(m_);
    dropped.swap(cache_);
    mem_.cache_dropped(cached_bytes_);
    cached_bytes_ = 0;
  }
  // Buffers still held by a command buffer in flight are freed when it completes.
}

void MetalBackend::empty_cache() {
  drop_cache();
  synchronize();  // completed command buffers let go of the buffers they held
}

ComputeEncoder& MetalBackend::encoder_for(const std::string& kernel, const std::vector<Binding>& buffers,
                                          const void* args, size_t args_len, uint32_t args_index,
                                          size_t threadgroup_memory) {
  if (!current_) {
    current_ = rt_->new_command_buffer();
    encoded_in_current_ = 0;
  }
  ComputeEncoder& enc = current_->compute_encoder();
  if (kernel_log_on_) kernel_log_.insert(kernel);
  enc.set_pipeline(rt_->pipeline(kernel));
  for (const Binding& b : buffers) enc.set_buffer(buffer_of(*b.tensor->storage), 0, b.index);
  if (args_len) enc.set_bytes(args, args_len, args_index);
  if (threadgroup_memory) enc.set_threadgroup_memory_length((threadgroup_memory + 15) / 16 * 16, 0);
  return enc;
}

void MetalBackend::after_dispatch() {
  ++stats_.dispatches;
  if (++encoded_in_current_ >= kBatchLimit) commit_locked();
}

void MetalBackend::dispatch(const std::string& kernel, const std::vector<Binding>& buffers, const void* args,
                            size_t args_len, uint32_t args_index, Size3 grid, Size3 threadgroup,
                            size_t threadgroup_memory) {
  std::lock_guard<std::mutex> lk(m_);
  encoder_for(kernel, buffers, args, args_len, args_index, threadgroup_memory).dispatch_threads(grid, threadgroup);
  after_dispatch();
}

void MetalBackend::dispatch_groups(const std::string& kernel, const std::vector<Binding>& buffers, const void* args,
                                   size_t args_len, uint32_t args_index, Size3 groups, Size3 threadgroup,
                                   size_t threadgroup_memory) {
  std::lock_guard<std::mutex> lk(m_);
  encoder_for(kernel, buffers, args, args_len, args_index, threadgroup_memory).dispatch_threadgroups(groups, threadgroup);
  after_dispatch();
}

void MetalBackend::commit_locked() {
  if (!current_) return;
  current_->commit();
  ++stats_.commits;
  in_flight_.push_back(std::move(current_));
  encoded_in_current_ = 0;
}

void MetalBackend::synchronize() {
  // A copy of the list, not a swap: a second thread synchronizing while this one waits must also
  // wait for these buffers, not return before their results are in memory.
  std::vector<std::shared_ptr<CommandBuffer>> done;
  {
    std::lock_guard<std::mutex> lk(m_);
    commit_locked();
    done = in_flight_;
    if (!done.empty()) ++stats_.waits;
  }
  struct Forget {  // drops the waited-for buffers from the list, also when a wait throws
    MetalBackend* be;
    const std::vector<std::shared_ptr<CommandBuffer>>& done;
    ~Forget() {
      std::lock_guard<std::mutex> lk(be->m_);
      auto& f = be->in_flight_;
      f.erase(std::remove_if(f.begin(), f.end(),
                             [&](const auto& cb) { return std::find(done.begin(), done.end(), cb) != done.end(); }),
              f.end());
    }
  } forget{this, done};
  // Wait for every buffer even if one failed, then report the first failure.
  std::exception_ptr first;
  for (auto& cb : done) {
    try {
      cb->wait_until_completed();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

void MetalBackend::wait_for(const Storage&) { synchronize(); }

QueueStats MetalBackend::stats() const {
  std::lock_guard<std::mutex> lk(m_);
  return stats_;
}

void MetalBackend::reset_stats() {
  std::lock_guard<std::mutex> lk(m_);
  stats_ = QueueStats{};
}

void MetalBackend::set_kernel_log(bool on) {
  std::lock_guard<std::mutex> lk(m_);
  kernel_log_on_ = on;
}

std::vector<std::string> MetalBackend::take_kernel_log() {
  std::lock_guard<std::mutex> lk(m_);
  std::vector<std::string> r(kernel_log_.begin(), kernel_log_.end());
  kernel_log_.clear();
  return r;
}

std::string MetalBackend::description() const {
  return label_ + " (" + rt_->name() + ", one queue, " + std::to_string(kBatchLimit) + " launches per command buffer)";
}

}  // namespace bm::metal

namespace bm {

// Called once by the device registry: the simulator always, the real GPU and NVIDIA GPUs when this
// build has them.
void register_metal_devices() {
#ifdef BESSEMER_HAVE_METAL
  if (auto rt = metal::make_metal_runtime())
    register_device(DeviceType::Metal, 0, "metal", std::make_unique<metal::MetalBackend>(std::move(rt), "Apple GPU"));
#endif
  register_device(DeviceType::MetalSim, 0, "metal-sim",
                  std::make_unique<metal::MetalBackend>(metal::make_sim_runtime(), "Metal simulator"));
#ifdef BESSEMER_HAVE_CUDA
  for (int i = 0, n = metal::cuda_device_count(); i < n; ++i)
    register_device(DeviceType::Cuda, i, "cuda",
                    std::make_unique<metal::MetalBackend>(metal::make_cuda_runtime(i), "NVIDIA GPU"));
#endif
}

}  // namespace bm
