#include "bindings/common.h"
#include "core/errors.h"
#include "core/parallel.h"
#include "cpu/blas_threads.h"
#include "cpu/isa.h"
#ifdef BESSEMER_HAVE_CUDA
#include "cuda/driver.h"
#endif
#ifdef BESSEMER_SANITIZE
#include "core/sanitizer_control.h"
#endif

PYBIND11_MODULE(_core, m) {
  m.doc() = "bessemer C++ core";
  bm::bind::init_errors(m);
  bm::bind::init_threads(m);
  bm::bind::init_determinism(m);
  bm::bind::init_types(m);
  bm::bind::init_tensor(m);
  bm::bind::init_dlpack(m);
  bm::bind::init_ops(m);
  bm::bind::init_random(m);
  bm::bind::init_metal(m);
  bm::bind::init_io(m);
  bm::bind::init_pool(m);
  bm::bind::init_norm(m);
  bm::bind::init_nn_misc(m);
  bm::bind::init_conv(m);
  bm::bind::init_autograd(m);
  bm::bind::init_backward(m);
  bm::bind::init_optim(m);
  bm::bind::init_index(m);
  bm::bind::init_shape(m);
  bm::bind::init_memory(m);
  bm::bind::init_cuda_compile(m);
  bm::bind::init_reduce_ext(m);
  bm::bind::init_elementwise(m);
  m.attr("__version__") = BESSEMER_VERSION;
  m.def("build_info", [] {
    py::dict d;
    d["version"] = BESSEMER_VERSION;
    d["build_type"] = BESSEMER_BUILD_TYPE;
    d["blas"] = BESSEMER_BLAS_NAME;
#ifdef BESSEMER_HAVE_METAL
    d["metal"] = "metal-cpp runtime (device 'metal' when a GPU is present) and the simulator";
#else
    d["metal"] = "simulator only (no Metal runtime in this build)";
#endif
#ifdef BESSEMER_HAVE_CUDA
    d["cuda"] = "CUDA target (device 'cuda' when an NVIDIA GPU is present): " + bm::cuda::driver_status();
#else
    d["cuda"] = "none (no CUDA target in this build)";
#endif
    d["compiler"] = __VERSION__;
    d["threads"] = bm::num_threads();
    d["cpu_isa"] = bm::cpu::isa_name(bm::cpu::cpu_isa());  // the copy of the hot loops in use
    d["cpu_zen3_or_zen4"] = bm::cpu::cpu_zen3_or_zen4();     // 256-bit FMA units (cpu/isa.h)
#ifdef BESSEMER_SANITIZE
    d["sanitize"] = BESSEMER_SANITIZE;
#endif
    return d;
  });
  m.def("get_num_threads", &bm::num_threads);
  m.def("set_num_threads", [](int n) {
    if (n < 1) throw bm::ValueError("[set_num_threads] expected a positive number of threads, got " + std::to_string(n));
    bm::set_num_threads(n);  // BLAS products run on this pool too (cpu/blas.cpp)
  }, py::arg("n"));
  m.def("_blas_threads", &bm::cpu::blas_threads);
  m.def("_fma_peak_gflops", [](double seconds) {
    if (!(seconds > 0.0 && seconds <= 60.0))
      throw bm::ValueError("[_fma_peak_gflops] expected seconds in (0, 60], got " + std::to_string(seconds));
    return bm::cpu::measured_fma_peak_gflops(seconds);
  }, py::arg("seconds") = 0.3,
        "float32 FMA GFLOP/s of the CPU pool's threads, measured (cpu/isa.h): the benchmarks' peak");
#ifdef BESSEMER_SANITIZE
  // Sanitizer builds only: a deliberate fault, so tools/sanitize.sh can prove reports fail the run.
  m.def("_sanitizer_control", &bm::sanitizer_control, py::arg("kind"));
#endif
}
