// NumPy interop: numpy(), __array__, the buffer protocol, from_numpy (zero-copy), item, tolist.
#include "bindings/common.h"
#include "core/errors.h"

namespace bm::bind {

namespace {

const char* buffer_format(DType d) {
  switch (d) {
    case DType::Bool: return "?";
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

}  // namespace

DType dtype_from_numpy(const py::dtype& dt, const char* op) {
  char k = dt.kind();
  size_t n = dt.itemsize();
  if (k == 'b') return DType::Bool;
  if (k == 'i' && n == 4) return DType::Int32;
  if (k == 'i' && n == 8) return DType::Int64;
  if (k == 'f' && n == 2) return DType::Float16;
  if (k == 'f' && n == 4) return DType::Float32;
  if (k == 'f' && n == 8) return DType::Float64;
  throw TypeError(std::string("[") + op + "] numpy dtype " + std::string(py::str(dt)) +
                  " is not supported; supported: bool, int32, int64, float16, float32, float64");
}

py::array to_numpy(const TensorPtr& t) {
  TensorPtr h = host_view(t);
  py::dtype dt = numpy_dtype(h->dtype);
  std::vector<py::ssize_t> shape(h->shape.begin(), h->shape.end()), strides;
  for (int64_t s : h->strides) strides.push_back(s * int64_t(itemsize(h->dtype)));
  // The capsule keeps the storage alive as long as the array (and its views) live.
  auto* keep = new std::shared_ptr<Storage>(h->storage);
  py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<Storage>*>(p); });
  return py::array(dt, shape, strides, h->bytes(), base);
}

TensorPtr from_numpy_zero_copy(const py::array& a) {
  DType dt = dtype_from_numpy(a.dtype(), "from_numpy");
  int64_t isz = int64_t(itemsize(dt));
  Shape shape(a.shape(), a.shape() + a.ndim()), strides(a.ndim());
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    int64_t s = a.strides()[i];
    if (s < 0) throw ValueError("[from_numpy] arrays with negative strides are not supported; use np.ascontiguousarray first");
    if (s % isz) throw ValueError("[from_numpy] array strides must be multiples of the item size");
    strides[i] = s / isz;
  }
  auto st = std::make_shared<Storage>();
  st->device = cpu_device();
  st->data = const_cast<void*>(a.data());
  st->nbytes = size_t(a.nbytes());
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

TensorPtr from_numpy_copy(const py::array& a, Device* device) {
  DType dt = dtype_from_numpy(a.dtype(), "tensor");
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
      .def("__array__", [](const TensorPtr& t, const py::object& dtype, const py::object&) {
        py::array a = to_numpy(t);
        return dtype.is_none() ? py::object(a) : a.attr("astype")(dtype);
      }, py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def("item", &item)
      .def("tolist", [](const TensorPtr& t) -> py::object {
        if (t->dtype == DType::BFloat16) return to_numpy(cast(t, DType::Float32)).attr("tolist")();
        return to_numpy(t).attr("tolist")();
      })
      .def_buffer([](const Tensor& t) {
        if (t.device() != cpu_device())
          throw TypeError("[buffer] tensor is on " + t.device()->name + "; copy it to cpu first with .to('cpu')");
        wait_readable(t);
        std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end()), strides;
        for (int64_t s : t.strides) strides.push_back(s * int64_t(itemsize(t.dtype)));
        return py::buffer_info(t.bytes(), py::ssize_t(itemsize(t.dtype)), buffer_format(t.dtype), py::ssize_t(t.ndim()),
                               shape, strides);
      });
  m.def("from_numpy", &from_numpy_zero_copy, py::arg("array"));
  m.def("_from_numpy_copy", [](const py::array& a, const py::object& device) { return from_numpy_copy(a, device_arg(device)); },
        py::arg("array"), py::arg("device") = py::none());
}

}  // namespace bm::bind
