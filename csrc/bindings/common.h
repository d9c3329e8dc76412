// Helpers shared by the binding files: argument conversion from Python objects.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/ops.h"
#include "core/ops_index.h"

namespace py = pybind11;

namespace bm::bind {

void init_errors(py::module_& m);
void init_types(py::module_& m);
void init_tensor(py::module_& m);
void init_tensor_numpy(py::module_& m, py::class_<Tensor, TensorPtr>& cls);
void init_ops(py::module_& m);
void init_random(py::module_& m);
void init_metal(py::module_& m);
void init_io(py::module_& m);
void init_pool(py::module_& m);
void init_norm(py::module_& m);  // norm.cpp
void init_nn_misc(py::module_& m);
void init_conv(py::module_& m);
void init_autograd(py::module_& m);  // after init_tensor: adds to the Tensor class
void init_inplace(py::module_& m, py::class_<Tensor, TensorPtr>& cls);
void init_backward(py::module_& m);  // backward.cpp: _core._<op>_backward (h2)
void init_optim(py::module_& m);  // optim.cpp
void init_index(py::module_& m);  // index.cpp
void init_memory(py::module_& m);  // memory.cpp
void init_cuda_compile(py::module_& m);  // cuda_compile.cpp: the CUDA target's compile check
void init_threads(py::module_& m);  // threads.cpp: GIL release in kernels and device waits
void init_determinism(py::module_& m);  // determinism.cpp
void init_dlpack(py::module_& m);  // dlpack.cpp: Tensor.__dlpack__, from_dlpack (after init_tensor)
void init_reduce_ext(py::module_& m);  // reduce_ext.cpp: scans, sorting, prod/std/norm, isclose
void init_elementwise(py::module_& m);  // elementwise.cpp: after init_tensor, adds & | ^ ~ to the Tensor class
void init_shape(py::module_& m);  // shape.cpp: flip, roll, tril/triu, gather, scatter (i12-shape)

// Indexing (index.cpp): a Python index (int, slice, None, ..., bool, Tensor, list, NumPy array or a
// tuple of them) as the core's list; lists and arrays become tensors on self's device.
std::vector<TensorIndex> index_arg(const py::object& index, const TensorPtr& self);
// t[idx] = value: a Tensor, a number, or array-like data converted to self's dtype and device.
Operand setitem_value(const py::object& value, const TensorPtr& self);

// The one Python object for each device, so `bm.device("cpu") is bm.device("cpu")`.
py::object device_object(Device* d);
py::object dtype_object(DType d);
// None -> the default device; a str or a Device object -> that device.
Device* device_arg(const py::handle& obj);
Device* default_device();
void set_default_device(Device* d);
// A bessemer.dtype, or None -> nullopt.
std::optional<DType> dtype_arg(const py::handle& obj);

bool is_number(const py::handle& obj);
Scalar scalar_arg(const char* op, const py::handle& obj);
// A Tensor or a Python number; TypeError naming the op otherwise.
Operand operand_arg(const char* op, const py::handle& obj);
// None -> nullptr; a Tensor -> itself; anything else is a TypeError naming the op and argument.
TensorPtr optional_tensor_arg(const char* op, const char* name, const py::handle& obj);
// A Python int (or an object with __index__) as int64: ValueError naming the op, what the number
// is ("size", "dim", "index"...) and the number when it does not fit in 64 bits (not pybind11's
// cast message). Every size, dim and index taken from Python goes through here.
int64_t int64_arg(const char* op, const char* what, const py::handle& obj);
// An int or a sequence of ints (a shape, or dims).
std::vector<int64_t> int_list_arg(const char* op, const py::handle& obj);
// Sizes given as f(2, 3) or f((2, 3)) or f([2, 3]).
std::vector<int64_t> sizes_from_args(const char* op, const py::args& args);

// numpy interop
py::array to_numpy(const TensorPtr& t);
TensorPtr from_numpy_zero_copy(const py::object& array);  // TypeError for anything but an ndarray
TensorPtr from_numpy_copy(const py::array& a, Device* device);
DType dtype_from_numpy(const py::dtype& dt, const char* op);

}  // namespace bm::bind
