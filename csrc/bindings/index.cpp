// Indexing: Python index objects -> core TensorIndex lists (t[idx], t[idx] = v), and the module
// functions index_select, index_add, index_copy_, nonzero, any, all. The rules live in the core
// (core/ops_index.h); this file only translates Python objects.
#include "bindings/common.h"
#include "core/errors.h"
#include "core/ops_index.h"
#include "core/ops_math.h"

namespace bm::bind {

namespace {

std::string type_name(const py::handle& o) { return std::string(py::str(py::type::of(o).attr("__name__"))); }

// Index arrays (from lists or NumPy) become int64 or bool tensors on `dev`. uint8 arrays are
// masks, as torch treats them; an empty list is an empty int64 index.
TensorPtr index_array(const py::handle& obj, Device* dev) {
  py::module_ np = py::module_::import("numpy");
  py::array arr = np.attr("asarray")(obj);
  const char kind = arr.dtype().kind();
  if (arr.size() == 0 && (kind == 'f' || kind == 'O')) arr = np.attr("zeros")(arr.attr("shape"), "int64");
  else if (kind == 'b' || (kind == 'u' && arr.dtype().itemsize() == 1)) arr = arr.attr("astype")("bool");
  else if (kind == 'i' || kind == 'u') arr = arr.attr("astype")("int64");
  else
    throw IndexError("[index] tensors used as indices must be int64, int32 or bool tensors, got a " + type_name(obj) +
                     " of numpy dtype " + std::string(py::str(arr.dtype())));
  return from_numpy_copy(np.attr("asarray")(arr, py::arg("order") = "C"), dev);  // keeps 0-d arrays 0-d
}

std::optional<int64_t> slice_part(PyObject* v) {
  if (v == Py_None) return std::nullopt;
  py::handle h(v);
  if (!PyLong_Check(v) && !py::hasattr(h, "__index__"))
    throw TypeError("[index] slice indices must be integers or None, got " + type_name(h));
  // As Python's own sequences do, a slice bound beyond 64 bits clamps (x[:2**70] is all of x).
  py::object num = PyLong_Check(v) ? py::reinterpret_borrow<py::object>(h) : h.attr("__index__")();
  int overflow = 0;
  long long r = PyLong_AsLongLongAndOverflow(num.ptr(), &overflow);
  if (overflow) return overflow > 0 ? INT64_MAX : INT64_MIN;
  return int64_t(r);
}

TensorIndex item_arg(const py::handle& it, Device* dev) {
  PyObject* o = it.ptr();
  // The common kinds first, without touching NumPy.
  if (PyBool_Check(o)) return TensorIndex::from_bool(o == Py_True);
  if (PyLong_Check(o)) return TensorIndex::from_int(int64_arg("index", "index", it));
  if (o == Py_None) return TensorIndex::none();
  if (o == Py_Ellipsis) return TensorIndex::ellipsis();
  if (PySlice_Check(o)) {
    auto* s = reinterpret_cast<PySliceObject*>(o);
    std::optional<int64_t> step = slice_part(s->step);
    return TensorIndex::from_slice(slice_part(s->start), slice_part(s->stop), step ? *step : 1);
  }
  if (py::isinstance<Tensor>(it)) {
    // A uint8 tensor indexes as a mask (its nonzero elements), as torch's (deprecated) byte masks and
    // as uint8 NumPy arrays do here.
    TensorPtr t = it.cast<TensorPtr>();
    if (t->dtype == DType::UInt8) t = cast(t, DType::Bool);
    return TensorIndex::from_tensor(t);
  }
  if (PyList_Check(o)) return TensorIndex::from_tensor(index_array(it, dev));
  static py::object* np_bool = new py::object(py::module_::import("numpy").attr("bool_"));  // lives with the module
  if (py::isinstance(it, *np_bool)) return TensorIndex::from_bool(it.cast<bool>());
  if (py::isinstance<py::array>(it)) return TensorIndex::from_tensor(index_array(it, dev));
  if (py::hasattr(it, "__index__")) return TensorIndex::from_int(int64_arg("index", "index", it));
  // TypeError (torch says IndexError): an index of the wrong type, as Python's own sequences say.
  throw TypeError("[index] only integers, slices (`:`), ellipsis (`...`), None, bools and integer or bool tensors, "
                  "lists or arrays are valid indices, got " + type_name(it));
}

// torch's rule for a list: a tuple of indices when it holds a slice, None, ... or a tensor,
// otherwise one index array.
bool list_is_tuple(const py::handle& l) {
  for (auto x : l.cast<py::list>())
    if (x.is_none() || x.ptr() == Py_Ellipsis || PySlice_Check(x.ptr()) || py::isinstance<Tensor>(x)) return true;
  return false;
}

}  // namespace

std::vector<TensorIndex> index_arg(const py::object& index, const TensorPtr& self) {
  std::vector<TensorIndex> out;
  Device* dev = self->device();
  if (py::isinstance<py::tuple>(index) || (PyList_Check(index.ptr()) && list_is_tuple(index))) {
    for (auto it : index) out.push_back(item_arg(it, dev));
  } else {
    out.push_back(item_arg(index, dev));
  }
  return out;
}

Operand setitem_value(const py::object& value, const TensorPtr& self) {
  if (py::isinstance<Tensor>(value)) return Operand(value.cast<TensorPtr>());
  if (is_number(value)) return Operand(scalar_arg("index_put", value));
  if (py::isinstance<py::array>(value) || PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
    // Converted on the host to self's dtype (bfloat16 through float32), then uploaded.
    static const char* np_names[] = {"bool", "int32", "int64", "float16", "float32", "float32", "float64"};
    py::module_ np = py::module_::import("numpy");
    py::array arr = np.attr("asarray")(value, np_names[int(self->dtype)], py::arg("order") = "C");
    return Operand(cast(from_numpy_copy(arr, self->device()), self->dtype));
  }
  throw TypeError("[index_put] expected a Tensor, a number or an array-like value, got " + type_name(value));
}

void init_index(py::module_& m) {
  m.def("index_select", [](const TensorPtr& t, const py::object& dim, const TensorPtr& index) {
    return index_select(t, int64_arg("index_select", "dim", dim), index);
  }, py::arg("input"), py::arg("dim"), py::arg("index"));
  m.def("index_add", [](const TensorPtr& t, const py::object& dim, const TensorPtr& index, const TensorPtr& src) {
    return index_add(t, int64_arg("index_add", "dim", dim), index, src);
  }, py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("source"));
  m.def("index_copy_", [](const TensorPtr& t, const py::object& dim, const TensorPtr& index, const TensorPtr& src) {
    index_copy_(t, int64_arg("index_copy_", "dim", dim), index, src);
    return t;
  }, py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("source"));
  m.def("nonzero", &nonzero, py::arg("input"));
  m.def("any", [](const TensorPtr& t, const py::object& dim, bool keepdim) {
    return any(t, dim.is_none() ? Dims{} : int_list_arg("any", dim), keepdim);
  }, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  m.def("all", [](const TensorPtr& t, const py::object& dim, bool keepdim) {
    return all(t, dim.is_none() ? Dims{} : int_list_arg("all", dim), keepdim);
  }, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
}

}  // namespace bm::bind
