// Typed C++ errors -> Python exceptions. DeviceMismatchError is a RuntimeError (as torch's device
// errors are); UnsupportedError is a TypeError (an op that does not take this dtype or device).
#include "bindings/common.h"
#include "core/errors.h"

namespace bm::bind {

void init_errors(py::module_& m) {
  static py::exception<DeviceMismatchError> device_mismatch(m, "DeviceMismatchError", PyExc_RuntimeError);
  static py::exception<UnsupportedError> unsupported(m, "UnsupportedError", PyExc_TypeError);
  // A data race or uninitialised read that the simulator's race detector found in a kernel.
  static py::exception<RaceError> race(m, "RaceError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const DeviceMismatchError& e) {
      py::set_error(device_mismatch, e.what());
    } catch (const UnsupportedError& e) {
      py::set_error(unsupported, e.what());
    } catch (const RaceError& e) {
      py::set_error(race, e.what());
    } catch (const ValueError& e) {
      py::set_error(PyExc_ValueError, e.what());
    } catch (const IndexError& e) {
      py::set_error(PyExc_IndexError, e.what());
    } catch (const TypeError& e) {
      py::set_error(PyExc_TypeError, e.what());
    } catch (const OutOfMemoryError& e) {
      py::set_error(PyExc_MemoryError, e.what());
    } catch (const ZeroDivisionError& e) {
      py::set_error(PyExc_ZeroDivisionError, e.what());
    } catch (const std::bad_alloc&) {
      py::set_error(PyExc_MemoryError, "[alloc] out of memory");
    } catch (const Error& e) {
      py::set_error(PyExc_RuntimeError, e.what());
    }
  });
}

}  // namespace bm::bind
