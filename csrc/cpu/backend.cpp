// The CPU reference backend: synchronous, host memory, kernels from the family files.
#include <memory>

#include "core/parallel.h"
#include "cpu/allocator.h"
#include "cpu/kernels.h"

namespace bm {

namespace {

class CpuBackend final : public Backend {
 public:
  CpuBackend() {
    cpu::register_copy_kernels(*this);
    cpu::register_unary_kernels(*this);
    cpu::register_binary_kernels(*this);
    cpu::register_reduce_kernels(*this);
    cpu::register_arg_reduce_kernels(*this);
    cpu::register_softmax_kernels(*this);
    cpu::register_matmul_kernels(*this);
    cpu::register_random_kernels(*this);
    cpu::register_pool_kernels(*this);
    cpu::register_norm_kernels(*this);
    cpu::register_nn_misc_kernels(*this);
    cpu::register_conv_kernels(*this);
    // conv / pool backward
    cpu::register_conv_backward_kernels(*this);
    cpu::register_pool_backward_kernels(*this);
    cpu::register_softmax_backward_kernels(*this);
    cpu::register_act_backward_kernels(*this);
    cpu::register_norm_backward_kernels(*this);
    cpu::register_optim_kernels(*this);
    cpu::register_index_kernels(*this);
    cpu::register_scan_kernels(*this);
    cpu::register_unary_math_kernels(*this);
    cpu::register_binary_math_kernels(*this);
  }

  std::shared_ptr<Storage> allocate(size_t nbytes) override {
    auto s = std::make_shared<Storage>();
    s->device = device;
    s->nbytes = nbytes;
    s->data = cpu::host_alloc(nbytes);
    s->release = [](Storage& st) { cpu::host_free(st.data, st.nbytes); };
    s->exposed = false;  // ours until an address is handed out (core/storage.h)
    return s;
  }

  MemoryAccount& memory() override { return cpu::host_memory(); }
  void empty_cache() override { cpu::host_cache_clear(); }

  std::string description() const override {
    return std::string("cpu (") + std::to_string(num_threads()) + " threads, BLAS: " + BESSEMER_BLAS_NAME + ")";
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace bm
