// Raw bytes in and out of tensors, for python/bessemer/io.py (the safetensors format). These work
// on the bytes of every dtype, bfloat16 included, without going through NumPy's dtypes.
#include <cstdint>
#include <cstring>

#include "bindings/common.h"
#include "core/backend.h"
#include "core/errors.h"

namespace bm::bind {

namespace {

// The logical contents of t as a C-contiguous host tensor (t itself when it already is one).
TensorPtr host_contiguous(const TensorPtr& t) {
  TensorPtr h = contiguous(to_device(t, cpu_device()));
  wait_readable(*h);
  return h;
}

// A 1-D uint8 NumPy array over the bytes of a contiguous host tensor; it keeps the storage alive.
py::array raw_bytes(const TensorPtr& t) {
  TensorPtr h = host_contiguous(t);
  h->storage->exposed = true;  // a writable NumPy array over it (core/storage.h)
  size_t n = size_t(h->numel()) * itemsize(h->dtype);
  auto* keep = new std::shared_ptr<Storage>(h->storage);
  py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<Storage>*>(p); });
  // An empty tensor may have no memory at all: point the array at something valid.
  static char nothing = 0;
  void* data = n ? static_cast<void*>(h->bytes()) : static_cast<void*>(&nothing);
  return py::array(py::dtype("uint8"), {py::ssize_t(n)}, {py::ssize_t(1)}, data, base);
}

bool dtype_supported(DType dtype, Device* device) { return device->backend->kernel(OpId::copy, dtype) != nullptr; }

DType required_dtype(const py::object& dtype) {
  std::optional<DType> d = dtype_arg(dtype);
  if (!d) throw TypeError("[from_bytes] a dtype is required");
  return *d;
}

// A new contiguous tensor on `device` whose bytes are buf[offset : offset + numel * itemsize].
// One copy, straight into the device's (host-addressable) memory.
TensorPtr from_bytes(const py::buffer& buf, int64_t offset, const std::vector<int64_t>& shape, DType dtype,
                     Device* device) {
  OpScope scope("from_bytes");  // named by OutOfMemoryError (load_file reads through it)
  if (!dtype_supported(dtype, device))
    throw UnsupportedError("[from_bytes] dtype " + std::string(dtype_name(dtype)) + " is not supported on device " +
                           device->name);
  if (offset < 0) throw ValueError("[from_bytes] offset must be non-negative");
  uint64_t numel = 1;
  for (int64_t s : shape) {
    if (s < 0) throw ValueError("[from_bytes] negative size in shape");
    if (s != 0 && numel > UINT64_MAX / uint64_t(s)) throw ValueError("[from_bytes] shape is too large");
    numel *= uint64_t(s);
  }
  if (numel > UINT64_MAX / itemsize(dtype)) throw ValueError("[from_bytes] shape is too large");
  uint64_t nbytes = numel * itemsize(dtype);
  py::buffer_info info = buf.request();
  uint64_t have = uint64_t(info.size) * uint64_t(info.itemsize);
  if (uint64_t(offset) > have || nbytes > have - uint64_t(offset))
    throw ValueError("[from_bytes] " + std::to_string(nbytes) + " bytes at offset " + std::to_string(offset) +
                     " run past the end of a " + std::to_string(have) + "-byte buffer");
  TensorPtr out = empty_tensor(Shape(shape.begin(), shape.end()), dtype, device);
  if (nbytes) {
    const char* src = static_cast<const char*>(info.ptr) + offset;
    char* dst = out->bytes();
    py::gil_scoped_release nogil;
    if (dtype == DType::Bool) {
      // A file may hold any byte for a bool; kernels expect exactly 0 or 1.
      for (uint64_t i = 0; i < nbytes; ++i) dst[i] = src[i] != 0;
    } else {
      std::memcpy(dst, src, nbytes);
    }
  }
  return out;
}

}  // namespace

void init_io(py::module_& m) {
  m.def("_raw_bytes", &raw_bytes, py::arg("tensor"),
        "The logical contents of a tensor (any device, any layout) as a C-contiguous uint8 host array.");
  m.def("_dtype_supported", [](const py::object& dtype, const py::object& device) {
    return dtype_supported(required_dtype(dtype), device_arg(device));
  }, py::arg("dtype"), py::arg("device"));
  m.def("_from_bytes", [](const py::buffer& buf, int64_t offset, const std::vector<int64_t>& shape,
                          const py::object& dtype, const py::object& device) {
    return from_bytes(buf, offset, shape, required_dtype(dtype), device_arg(device));
  }, py::arg("buffer"), py::arg("offset"), py::arg("shape"), py::arg("dtype"), py::arg("device"),
     "A new contiguous tensor on `device` holding buffer[offset : offset + nbytes] (little-endian, C order).");
}

}  // namespace bm::bind
