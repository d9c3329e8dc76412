// DLPack both ways: Tensor.__dlpack__ / __dlpack_device__ (np.from_dlpack(t), torch.from_dlpack(t))
// and bessemer.from_dlpack(obj). Zero-copy for cpu memory. The structs are written from the DLPack
// specification (dlpack.h v1.1, https://dmlc.github.io/dlpack/latest/): they are an ABI, so their
// layout must match the spec field for field.
#include <cstring>

#include "autograd/node.h"
#include "bindings/common.h"
#include "core/errors.h"

namespace bm::bind {

namespace {

// ---- the DLPack ABI ----
enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLMetal = 8, kDLCUDAManaged = 13 };
enum DLDataTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 };
struct DLDevice { int32_t device_type; int32_t device_id; };
struct DLDataType { uint8_t code; uint8_t bits; uint16_t lanes; };
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; NULL means compact row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {  // the legacy (unversioned) struct, capsule "dltensor"
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLPackVersion { uint32_t major; uint32_t minor; };
struct DLManagedTensorVersioned {  // DLPack >= 1.0, capsule "dltensor_versioned"
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kFlagReadOnly = 1ull << 0;
constexpr uint64_t kFlagIsCopied = 1ull << 1;
constexpr uint32_t kMajor = 1, kMinor = 1;

const char* const kName = "dltensor";
const char* const kUsedName = "used_dltensor";
const char* const kVersionedName = "dltensor_versioned";
const char* const kUsedVersionedName = "used_dltensor_versioned";

DLDataType dl_dtype(DType d) {
  switch (d) {
    case DType::Bool: return {kDLBool, 8, 1};
    case DType::Int8: return {kDLInt, 8, 1};
    case DType::UInt8: return {kDLUInt, 8, 1};
    case DType::Int16: return {kDLInt, 16, 1};
    case DType::Int32: return {kDLInt, 32, 1};
    case DType::Int64: return {kDLInt, 64, 1};
    case DType::Float16: return {kDLFloat, 16, 1};
    case DType::BFloat16: return {kDLBfloat, 16, 1};
    case DType::Float32: return {kDLFloat, 32, 1};
    case DType::Float64: return {kDLFloat, 64, 1};
  }
  throw TypeError("[__dlpack__] unknown dtype");
}

DType dtype_from_dl(DLDataType t) {
  if (t.lanes == 1) {
    for (int k = 0; k < kNumDTypes; ++k) {
      DLDataType c = dl_dtype(DType(k));
      if (c.code == t.code && c.bits == t.bits) return DType(k);
    }
  }
  static const char* codes[] = {"int", "uint", "float", "opaque handle", "bfloat", "complex", "bool"};
  std::string code = t.code < 7 ? codes[t.code] : "code " + std::to_string(t.code);
  std::string supported;
  for (int k = 0; k < kNumDTypes; ++k) supported += std::string(k ? ", " : "") + dtype_name(DType(k));
  throw TypeError("[from_dlpack] DLPack dtype " + code + std::to_string(t.bits) +
                  (t.lanes != 1 ? " with " + std::to_string(t.lanes) + " lanes" : std::string()) +
                  " is not supported; supported: " + supported);
}

// ---- export: what a capsule owns until its consumer (or nobody) calls the deleter ----
struct ExportCtx {
  TensorPtr tensor;  // keeps the storage (and whatever owns it: a NumPy array...) alive
  std::vector<int64_t> shape, strides;
};

void fill_dl_tensor(DLTensor& d, ExportCtx& ctx) {
  const Tensor& t = *ctx.tensor;
  ctx.shape.assign(t.shape.begin(), t.shape.end());
  ctx.strides.assign(t.strides.begin(), t.strides.end());
  d.data = t.bytes();
  d.device = {kDLCPU, 0};
  d.ndim = int32_t(t.ndim());
  d.dtype = dl_dtype(t.dtype);
  d.shape = ctx.shape.empty() ? nullptr : ctx.shape.data();
  d.strides = ctx.strides.empty() ? nullptr : ctx.strides.data();
  d.byte_offset = 0;
}

template <typename M> void delete_managed(M* m) {
  if (!m) return;
  // Dropping the last reference may release a NumPy array (its release takes the GIL itself).
  delete static_cast<ExportCtx*>(m->manager_ctx);
  delete m;
}

// A capsule nobody consumed still owns its tensor: free it (the spec's producer-side destructor).
template <typename M> void capsule_destructor(PyObject* cap, const char* name) {
  if (!PyCapsule_IsValid(cap, name)) return;  // renamed "used_…": the consumer owns it now
  auto* m = static_cast<M*>(PyCapsule_GetPointer(cap, name));
  if (m && m->deleter) m->deleter(m);
}

std::string device_of(const py::object& dl_device) {
  return "(" + std::string(py::str(dl_device[py::int_(0)])) + ", " + std::string(py::str(dl_device[py::int_(1)])) + ")";
}

py::object to_dlpack(const TensorPtr& self, const py::object& stream, const py::object& max_version,
                     const py::object& dl_device, const py::object& copy_obj) {
  const char* op = "__dlpack__";
  self->storage->exposed = true;  // the consumer may share and write it (core/storage.h)
  if (requires_grad(self))
    throw Error("[__dlpack__] cannot export a tensor that requires grad (the consumer could change it behind "
                "autograd's back); use tensor.detach()");
  std::optional<bool> copy;
  if (!copy_obj.is_none()) copy = copy_obj.cast<bool>();
  bool to_cpu = false;
  if (!dl_device.is_none()) {
    if (py::len(dl_device) != 2) throw ValueError("[__dlpack__] dl_device must be a (device_type, device_id) pair");
    int dt = dl_device[py::int_(0)].cast<int>(), di = dl_device[py::int_(1)].cast<int>();
    if (dt != kDLCPU || di != 0)
      throw py::buffer_error("[__dlpack__] dl_device " + device_of(dl_device) +
                        " is not supported: bessemer exports to the cpu (device type 1, id 0) only");
    to_cpu = true;
  }
  TensorPtr t = self;
  bool copied = false;
  if (t->device() != cpu_device()) {
    if (!to_cpu || (copy && !*copy))
      throw py::buffer_error(std::string("[") + op + "] the tensor is on " + t->device()->name +
                        "; DLPack exports cpu tensors only: call .to('cpu') first, or ask for a copy with "
                        "dl_device=(1, 0)");
    t = to_device(t, cpu_device());
    copied = true;
  } else if (!stream.is_none() && !(PyLong_Check(stream.ptr()) && stream.cast<py::int_>().equal(py::int_(-1)))) {
    // None per the protocol; -1 ("no synchronization") is harmless on the cpu and some consumers send it.
    throw ValueError("[__dlpack__] stream must be None for a cpu tensor, got " + std::string(py::repr(stream)));
  }
  const bool versioned = !max_version.is_none() && py::len(max_version) >= 1 &&
                         max_version[py::int_(0)].cast<int64_t>() >= 1;
  if (copy && *copy && !copied) {
    t = clone(t);
    copied = true;
  }
  if (!copied && t->storage->readonly && !versioned) {
    // The legacy struct has no read-only flag: its consumer would take the memory as writable.
    if (copy && !*copy)
      throw py::buffer_error("[__dlpack__] the tensor is read-only and the consumer asked for the legacy DLPack "
                        "capsule (max_version < 1.0), which cannot say so; allow a copy (copy=None or True)");
    t = clone(t);
    copied = true;
  }
  wait_readable(*t);
  auto ctx = std::make_unique<ExportCtx>();
  ctx->tensor = t;
  if (versioned) {
    auto m = std::make_unique<DLManagedTensorVersioned>();
    m->version = {kMajor, kMinor};
    m->flags = (t->storage->readonly ? kFlagReadOnly : 0) | (copied ? kFlagIsCopied : 0);
    fill_dl_tensor(m->dl_tensor, *ctx);
    m->manager_ctx = ctx.release();
    m->deleter = &delete_managed<DLManagedTensorVersioned>;
    PyObject* cap = PyCapsule_New(m.get(), kVersionedName, [](PyObject* c) {
      capsule_destructor<DLManagedTensorVersioned>(c, kVersionedName);
    });
    if (!cap) {
      delete_managed(m.release());
      throw py::error_already_set();
    }
    m.release();
    return py::reinterpret_steal<py::object>(cap);
  }
  auto m = std::make_unique<DLManagedTensor>();
  fill_dl_tensor(m->dl_tensor, *ctx);
  m->manager_ctx = ctx.release();
  m->deleter = &delete_managed<DLManagedTensor>;
  PyObject* cap = PyCapsule_New(m.get(), kName, [](PyObject* c) { capsule_destructor<DLManagedTensor>(c, kName); });
  if (!cap) {
    delete_managed(m.release());
    throw py::error_already_set();
  }
  m.release();
  return py::reinterpret_steal<py::object>(cap);
}

// ---- import ----

// Calls the producer's __dlpack__ asking for the versioned struct; producers older than the
// 2023 protocol take no keywords (TypeError), so they are asked again without.
py::object producer_capsule(const py::object& obj) {
  py::object fn = obj.attr("__dlpack__");
  try {
    return fn(py::arg("max_version") = py::make_tuple(kMajor, kMinor));
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
  }
  return fn();
}

// Every bool byte reachable through the view is 0 or 1 (our kernels assume so; NumPy reads any
// nonzero byte as True).
bool bools_ok(const uint8_t* p, const Shape& shape, const Shape& strides, size_t d) {
  if (d == shape.size()) return *p <= 1;
  for (int64_t i = 0; i < shape[d]; ++i)
    if (!bools_ok(p + i * strides[d], shape, strides, d + 1)) return false;
  return true;
}

TensorPtr from_capsule(const py::object& cap) {
  PyObject* c = cap.ptr();
  if (!PyCapsule_CheckExact(c))
    throw TypeError("[from_dlpack] the producer's __dlpack__ returned a " +
                    std::string(py::str(py::type::of(cap).attr("__name__"))) + ", not a DLPack capsule");
  const bool versioned = PyCapsule_IsValid(c, kVersionedName);
  if (!versioned && !PyCapsule_IsValid(c, kName))
    throw ValueError("[from_dlpack] expected a DLPack capsule named 'dltensor' or 'dltensor_versioned' (one not yet "
                     "consumed), got one named '" + std::string(PyCapsule_GetName(c) ? PyCapsule_GetName(c) : "") + "'");
  DLTensor* d;
  uint64_t flags = 0;
  std::function<void()> free_it;
  if (versioned) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, kVersionedName));
    if (m->version.major != kMajor)
      throw py::buffer_error("[from_dlpack] the producer gave DLPack version " + std::to_string(m->version.major) + "." +
                        std::to_string(m->version.minor) + "; bessemer reads major version 1");
    d = &m->dl_tensor;
    flags = m->flags;
    free_it = [m] { if (m->deleter) m->deleter(m); };
  } else {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, kName));
    d = &m->dl_tensor;
    free_it = [m] { if (m->deleter) m->deleter(m); };
  }
  // Everything that can refuse the tensor is checked before the capsule changes hands, so a
  // refused capsule is still freed by its own destructor.
  if (d->device.device_type != kDLCPU && d->device.device_type != kDLCUDAHost)
    throw py::buffer_error("[from_dlpack] the producer's memory is on DLPack device type " +
                      std::to_string(d->device.device_type) + "; bessemer takes cpu memory (device type 1): copy "
                      "it to the cpu first");
  const DType dt = dtype_from_dl(d->dtype);
  const int64_t isz = int64_t(itemsize(dt));
  if (d->ndim < 0) throw ValueError("[from_dlpack] negative ndim " + std::to_string(d->ndim));
  Shape shape(size_t(d->ndim)), strides(size_t(d->ndim));
  for (int32_t i = 0; i < d->ndim; ++i) {
    shape[size_t(i)] = d->shape[i];
    if (shape[size_t(i)] < 0) throw ValueError("[from_dlpack] negative size in the producer's shape");
  }
  if (d->strides) {
    for (int32_t i = 0; i < d->ndim; ++i) strides[size_t(i)] = d->strides[i];
  } else {
    int64_t s = 1;
    for (int32_t i = d->ndim - 1; i >= 0; --i) { strides[size_t(i)] = s; s *= std::max<int64_t>(shape[size_t(i)], 1); }
  }
  const int64_t n = shape_numel(shape);
  int64_t last = 0;  // the farthest element, in elements from the first
  for (size_t i = 0; i < shape.size(); ++i) {
    if (strides[i] < 0 && shape[i] > 1)
      throw py::buffer_error("[from_dlpack] the producer's tensor has a negative stride (e.g. a[::-1]); a bessemer tensor "
                        "cannot share it: make it contiguous first (np.ascontiguousarray, .contiguous()) or use "
                        "bessemer.tensor(data) to copy");
    if (shape[i] > 0) last += (shape[i] - 1) * std::max<int64_t>(strides[i], 0);
  }
  char* data = static_cast<char*>(d->data) + d->byte_offset;
  if (n > 0 && reinterpret_cast<uintptr_t>(data) % uintptr_t(isz))
    throw py::buffer_error("[from_dlpack] the producer's data is not aligned to its " + std::to_string(isz) +
                      "-byte items; a tensor cannot share it (bessemer.tensor(data) copies it)");
  if (dt == DType::Bool && n > 0 && !bools_ok(reinterpret_cast<const uint8_t*>(data), shape, strides, 0))
    throw ValueError("[from_dlpack] the bool tensor holds bytes other than 0 and 1; a tensor cannot share it "
                     "(bessemer.tensor(data) copies it)");
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] <= 1) strides[i] = std::max<int64_t>(strides[i], 0);  // a stride over size <= 1 never moves

  auto st = std::make_shared<Storage>();
  st->device = cpu_device();
  st->data = data;
  st->nbytes = n > 0 ? size_t((last + 1) * isz) : 0;
  st->readonly = flags & kFlagReadOnly;
  // The capsule changes hands: renamed "used_…", its destructor no longer frees it; the storage's
  // release calls the producer's deleter (which keeps the producer alive until then).
  if (PyCapsule_SetName(c, versioned ? kUsedVersionedName : kUsedName) != 0) throw py::error_already_set();
  auto* keep = new std::function<void()>(std::move(free_it));
  st->handle = keep;
  st->release = [](Storage& s) {
    auto* f = static_cast<std::function<void()>*>(s.handle);
    (*f)();
    delete f;
  };
  auto t = std::make_shared<Tensor>();
  t->storage = st;
  t->shape = shape;
  t->strides = strides;
  t->dtype = dt;
  return t;
}

TensorPtr from_dlpack(const py::object& obj, const py::object& device, const py::object& copy_obj) {
  TensorPtr t;
  if (py::isinstance<Tensor>(obj)) {
    const TensorPtr& src = obj.cast<TensorPtr>();
    t = make_view(src, src->shape, src->strides, src->offset);
  } else if (PyCapsule_CheckExact(obj.ptr())) {
    t = from_capsule(obj);
  } else if (py::hasattr(obj, "__dlpack__")) {
    if (py::hasattr(obj, "__dlpack_device__")) {
      py::object dev = obj.attr("__dlpack_device__")();
      int dt = dev[py::int_(0)].cast<int>();
      if (dt != kDLCPU && dt != kDLCUDAHost)
        throw py::buffer_error("[from_dlpack] the producer's memory is on DLPack device " + device_of(dev) +
                          "; bessemer takes cpu memory (device type 1): copy it to the cpu first");
    }
    t = from_capsule(producer_capsule(obj));
  } else {
    throw TypeError("[from_dlpack] expected an object with __dlpack__ (a NumPy array, a torch tensor...) or a DLPack "
                    "capsule, got " + std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  const bool want_copy = !copy_obj.is_none() && copy_obj.cast<bool>();
  const bool no_copy = !copy_obj.is_none() && !copy_obj.cast<bool>();
  if (!device.is_none()) {
    Device* dev = device_arg(device);
    if (dev != t->device()) {
      if (no_copy)
        throw py::buffer_error("[from_dlpack] moving the tensor to " + dev->name + " needs a copy, and copy=False");
      return to_device(t, dev);
    }
  }
  return want_copy ? clone(t) : t;
}

}  // namespace

void init_dlpack(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<Tensor, TensorPtr>>(m.attr("Tensor"));
  cls.def("__dlpack__", &to_dlpack, py::kw_only(), py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
          py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
          "A DLPack capsule sharing this cpu tensor's memory (versioned when max_version >= (1, 0)).");
  cls.def("__dlpack_device__", [](const Tensor& t) -> py::tuple {
    Device* d = t.device();
    if (d == cpu_device()) return py::make_tuple(int(kDLCPU), 0);
    // Metal (and the simulator's stand-in for it); cuda buffers are managed memory.
    const int type = d->type_name == "cuda" ? int(kDLCUDAManaged) : int(kDLMetal);
    return py::make_tuple(type, int(std::max(d->index, 0)));
  });
  m.def("from_dlpack", &from_dlpack, py::arg("ext_tensor"), py::kw_only(), py::arg("device") = py::none(),
        py::arg("copy") = py::none(),
        "A cpu tensor sharing the memory of any object with __dlpack__ (NumPy arrays, torch tensors...).");
}

}  // namespace bm::bind
