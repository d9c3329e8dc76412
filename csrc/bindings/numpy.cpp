// NumPy interop: numpy(), __array__, the buffer protocol, from_numpy (zero-copy), item, tolist.
// Every array is read as NumPy reads it or refused (docs/numpy.md); read-only arrays give read-only
// tensors (Storage::readonly).
#include "bindings/common.h"
#include "core/errors.h"

namespace bm::bind {

namespace {

const char* buffer_format(DType d) {
  switch (d) {
    case DType::Bool: return "?";
    case DType::Int8: return "b";
    case DType::UInt8: return "B";
    case DType::Int16: return "h";
    case DType::Int32: return "i";
    case DType::Int64: return "q";
    case DType::Float16: return "e";
    case DType::Float32: return "f";
    case DType::Float64: return "d";
    case DType::BFloat16: break;
  }
  throw TypeError("[numpy] bfloat16 has no NumPy equivalent; convert first with .to(bessemer.float32)");
}

py::dtype numpy_dtype(DType d) { return py::dtype(std::string(buffer_format(d))); }

// A host-readable view of t: cpu tensors as they are; other devices copied to cpu first.
TensorPtr host_view(const TensorPtr& t) {
  TensorPtr h = to_device(t, cpu_device());
  wait_readable(*h);
  return h;
}

// NumPy's flags of an array, read without a Python attribute lookup.
int array_flags(const py::array& a) { return py::detail::array_proxy(a.ptr())->flags; }

bool is_aligned(const py::array& a) { return array_flags(a) & py::detail::npy_api::NPY_ARRAY_ALIGNED_; }

bool native_byte_order(const py::array& a) { return a.dtype().attr("isnative").cast<bool>(); }

// Strides our tensors can hold: whole elements, none negative (a tensor's view of the memory
// starts at its first element and walks forward).
bool strides_fit(const py::array& a) {
  const py::ssize_t isz = a.itemsize();
  for (py::ssize_t i = 0; i < a.ndim(); ++i)
    if (a.strides()[i] < 0 || a.strides()[i] % isz) return false;
  return true;
}

// NumPy reads any nonzero byte of a bool array as True (np.frombuffer(b"\x02", bool) is True);
// our kernels assume a bool is 0 or 1.
bool bools_are_0_or_1(const py::array& a) {
  if (a.size() == 0) return true;
  return !py::module_::import("numpy").attr("any")(a.attr("view")("uint8").attr("__gt__")(1)).cast<bool>();
}

// Bytes the array's memory spans from its first element (strides non-negative): what a tensor
// over it may address, so helpers that lay fresh memory out like it (CopySlices) allocate enough.
size_t span_bytes(const py::array& a) {
  if (a.size() == 0) return 0;
  py::ssize_t last = 0;
  for (py::ssize_t i = 0; i < a.ndim(); ++i) last += (a.shape()[i] - 1) * a.strides()[i];
  return size_t(last + a.itemsize());
}

std::string dtype_str(const py::dtype& dt) { return std::string(py::str(dt)); }

}  // namespace

// The dtype by kind and size; the byte order is the caller's business (copies convert it,
// from_numpy refuses a non-native one).
DType dtype_from_numpy(const py::dtype& dt, const char* op) {
  char k = dt.kind();
  size_t n = dt.itemsize();
  if (k == 'b') return DType::Bool;
  if (k == 'i' && n == 1) return DType::Int8;
  if (k == 'u' && n == 1) return DType::UInt8;
  if (k == 'i' && n == 2) return DType::Int16;
  if (k == 'i' && n == 4) return DType::Int32;
  if (k == 'i' && n == 8) return DType::Int64;
  if (k == 'f' && n == 2) return DType::Float16;
  if (k == 'f' && n == 4) return DType::Float32;
  if (k == 'f' && n == 8) return DType::Float64;
  std::string hint = (k == 'i' || k == 'u') ? "; bessemer.tensor(array) widens other integer arrays to int64" : "";
  throw TypeError(std::string("[") + op + "] numpy dtype " + dtype_str(dt) +
                  " is not supported; supported: bool, int8, uint8, int16, int32, int64, float16, float32, float64" + hint);
}

py::array to_numpy(const TensorPtr& t) {
  TensorPtr h = host_view(t);
  py::dtype dt = numpy_dtype(h->dtype);
  std::vector<py::ssize_t> shape(h->shape.begin(), h->shape.end()), strides;
  for (int64_t s : h->strides) strides.push_back(s * int64_t(itemsize(h->dtype)));
  h->storage->exposed = true;  // NumPy can write it behind bessemer's back (core/storage.h)
  // The capsule keeps the storage alive as long as the array (and its views) live.
  auto* keep = new std::shared_ptr<Storage>(h->storage);
  py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<Storage>*>(p); });
  py::array a(dt, shape, strides, h->bytes(), base);
  // A view of read-only memory is read-only for NumPy too (numpy() must not open a back door).
  if (h->storage->readonly) py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

TensorPtr from_numpy_zero_copy(const py::object& obj) {
  if (!py::isinstance<py::array>(obj))
    throw TypeError("[from_numpy] expected a numpy.ndarray, got " +
                    std::string(py::str(py::type::of(obj).attr("__name__"))) +
                    "; use bessemer.tensor(data) for numbers, lists and NumPy scalars");
  py::array a = py::reinterpret_borrow<py::array>(obj);
  DType dt = dtype_from_numpy(a.dtype(), "from_numpy");
  // The tensor shares the array's memory, so it can only take memory it reads as NumPy does;
  // bessemer.tensor(a) copies and converts every one of these.
  const std::string use_tensor = "; bessemer.tensor(array) copies it into a tensor that reads right";
  if (!native_byte_order(a))
    throw ValueError("[from_numpy] the array's byte order (dtype " + dtype_str(a.dtype()) +
                     ") is not the machine's; a tensor sharing its memory would misread it" + use_tensor);
  if (!is_aligned(a))
    throw ValueError("[from_numpy] the array's data is not aligned to its " + std::to_string(a.itemsize()) +
                     "-byte items (e.g. np.frombuffer with an offset); a tensor cannot share it" + use_tensor);
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    if (a.strides()[i] < 0)
      throw ValueError("[from_numpy] arrays with negative strides (e.g. a[::-1]) cannot be shared" + use_tensor);
    if (a.strides()[i] % a.itemsize())
      throw ValueError("[from_numpy] array strides must be multiples of the item size (" +
                       std::to_string(a.itemsize()) + " bytes), got " + std::to_string(a.strides()[i]) +
                       " (e.g. a field of a structured array)" + use_tensor);
  }
  if (dt == DType::Bool && !bools_are_0_or_1(a))
    throw ValueError("[from_numpy] the bool array holds bytes other than 0 and 1 (NumPy reads them as True); a "
                     "tensor cannot share it" + use_tensor);
  const int64_t isz = int64_t(itemsize(dt));
  Shape shape(a.shape(), a.shape() + a.ndim()), strides(size_t(a.ndim()));
  for (py::ssize_t i = 0; i < a.ndim(); ++i) strides[size_t(i)] = a.strides()[i] / isz;
  auto st = std::make_shared<Storage>();
  st->device = cpu_device();
  st->data = const_cast<void*>(a.data());
  st->nbytes = span_bytes(a);
  // Read-only arrays (writeable=False, np.broadcast_to, memmap mode 'r') give read-only tensors:
  // check_writable refuses every write into them.
  st->readonly = !a.writeable();
  auto* owner = new py::object(a);
  st->handle = owner;
  st->release = [](Storage& s) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(s.handle);
  };
  auto t = std::make_shared<Tensor>();
  t->storage = st;
  t->shape = shape;
  t->strides = strides;
  t->dtype = dt;
  return t;
}

TensorPtr from_numpy_copy(const py::array& a_in, Device* device) {
  DType dt = dtype_from_numpy(a_in.dtype(), "tensor");
  py::array a = a_in;
  // Memory a host copy cannot read element by element as it lies (foreign byte order, unaligned
  // items, negative or partial-item strides) goes through NumPy's own conversion first.
  if (!native_byte_order(a) || !is_aligned(a) || !strides_fit(a)) {
    py::object native = a.dtype().attr("newbyteorder")("=");
    a = py::module_::import("numpy").attr("array")(a, py::arg("dtype") = native, py::arg("order") = "C");
  }
  if (dt == DType::Bool && !bools_are_0_or_1(a)) a = a.attr("view")("uint8").attr("__ne__")(py::int_(0));
  Shape shape(a.shape(), a.shape() + a.ndim()), bstrides(a.strides(), a.strides() + a.ndim());
  return from_host(a.data(), shape, bstrides, dt, device);
}

py::object item(const TensorPtr& t) {
  if (t->numel() != 1)
    throw ValueError("[item] a tensor with " + std::to_string(t->numel()) + " elements cannot be converted to a Python number");
  if (t->dtype == DType::BFloat16) return py::float_(float(*host_view(contiguous(t))->data<bfloat16_t>()));
  return to_numpy(t).attr("reshape")(py::tuple()).attr("item")();
}

void init_tensor_numpy(py::module_& m, py::class_<Tensor, TensorPtr>& cls) {
  cls.def("numpy", &to_numpy)
      .def("__array__", [](const TensorPtr& t, const py::object& dtype, const py::object& copy) {
        // NumPy 2's protocol: copy=False must not copy (a tensor on another device, or a dtype
        // change, needs one), copy=True must.
        const bool needs_copy = t->device() != cpu_device() ||
                                (!dtype.is_none() && !numpy_dtype(t->dtype).attr("__eq__")(dtype).cast<bool>());
        if (!copy.is_none() && !copy.cast<bool>() && needs_copy)
          throw ValueError("[__array__] a tensor on " + t->device()->name + " of dtype " + dtype_name(t->dtype) +
                           " cannot become this NumPy array without a copy (copy=False)");
        py::array a = to_numpy(t);
        if (!dtype.is_none()) return py::object(a.attr("astype")(dtype));
        return (!copy.is_none() && copy.cast<bool>()) ? py::object(a.attr("copy")()) : py::object(a);
      }, py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def_property_readonly("is_readonly", [](const Tensor& t) { return t.storage->readonly; },
                             "True when the tensor's memory belongs to a read-only NumPy array: writes raise.")
      .def("_check_writable", [](const Tensor& t, const std::string& op) { check_writable(op.c_str(), t); }, py::arg("op"))
      .def("item", &item)
      .def("tolist", [](const TensorPtr& t) -> py::object {
        if (t->dtype == DType::BFloat16) return to_numpy(cast(t, DType::Float32)).attr("tolist")();
        return to_numpy(t).attr("tolist")();
      })
      .def_buffer([](const Tensor& t) {
        if (t.device() != cpu_device())
          throw TypeError("[buffer] tensor is on " + t.device()->name + "; copy it to cpu first with .to('cpu')");
        wait_readable(t);
        t.storage->exposed = true;  // the buffer's holder can write it (core/storage.h)
        std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end()), strides;
        for (int64_t s : t.strides) strides.push_back(s * int64_t(itemsize(t.dtype)));
        return py::buffer_info(t.bytes(), py::ssize_t(itemsize(t.dtype)), buffer_format(t.dtype), py::ssize_t(t.ndim()),
                               shape, strides, /*readonly=*/t.storage->readonly);
      });
  m.def("from_numpy", &from_numpy_zero_copy, py::arg("array"),
        "A cpu tensor sharing the array's memory (read-only when the array is); arrays it cannot share "
        "(foreign byte order, unaligned, negative or partial-item strides) raise ValueError.");
  m.def("_from_numpy_copy", [](const py::array& a, const py::object& device) { return from_numpy_copy(a, device_arg(device)); },
        py::arg("array"), py::arg("device") = py::none());
}

}  // namespace bm::bind
