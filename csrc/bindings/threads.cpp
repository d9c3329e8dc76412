// The GIL hooks of core/gil.h: kernels and device waits run without the GIL, so Python threads
// overlap. PyGILState_Check makes the hooks safe wherever the core is entered from: a thread that
// does not hold the GIL (the autograd engine, which runs with it released; a pool worker; a
// nested op inside a kernel) releases nothing.
#include "bindings/common.h"
#include "core/gil.h"

namespace bm::bind {

namespace {
void* release_gil() {
  if (!Py_IsInitialized() || !PyGILState_Check()) return nullptr;
  return PyEval_SaveThread();
}
void restore_gil(void* state) { PyEval_RestoreThread(static_cast<PyThreadState*>(state)); }
}  // namespace

void init_threads(py::module_& m) {
  set_gil_hooks(GilHooks{&release_gil, &restore_gil});
  m.def("_gil_released_in_kernels", [] { return gil_hooks().release != nullptr; });
  // A control for tests/test_threads.py: with the hooks removed, kernels hold the GIL.
  m.def("_set_gil_release_for_testing", [](bool on) {
    set_gil_hooks(on ? GilHooks{&release_gil, &restore_gil} : GilHooks{});
  }, py::arg("on"));
}

}  // namespace bm::bind
