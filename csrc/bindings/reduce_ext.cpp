// Reductions, scans, sorting and comparisons (core/ops_scan.h, core/ops_stats.h) as _core
// functions; python/bessemer/_reduce_ops.py gives them torch's signatures.
#include "bindings/common.h"
#include "core/ops_scan.h"
#include "core/ops_stats.h"

namespace bm::bind {

namespace {

// None -> every dim (an empty list); an int or a sequence -> those dims.
Dims dims_arg(const char* op, const py::object& dim) {
  if (dim.is_none()) return {};
  return int_list_arg(op, dim);
}

}  // namespace

void init_reduce_ext(py::module_& m) {
  m.def("cumsum", [](const TensorPtr& t, int64_t dim, const py::object& dtype) { return cumsum(t, dim, dtype_arg(dtype)); },
        py::arg("input"), py::arg("dim"), py::arg("dtype") = py::none());
  m.def("cumprod", [](const TensorPtr& t, int64_t dim, const py::object& dtype) { return cumprod(t, dim, dtype_arg(dtype)); },
        py::arg("input"), py::arg("dim"), py::arg("dtype") = py::none());
  m.def("argsort", &argsort, py::arg("input"), py::arg("dim"), py::arg("descending"));
  m.def("sort", &sort, py::arg("input"), py::arg("dim"), py::arg("descending"));
  m.def("topk", &topk, py::arg("input"), py::arg("k"), py::arg("dim"), py::arg("largest"));
  m.def("median_dim", &median_dim, py::arg("input"), py::arg("dim"), py::arg("keepdim"));
  m.def("median", &median, py::arg("input"));
  m.def("unique", [](const TensorPtr& t, bool inverse, bool counts, const py::object& dim) {
    std::optional<int64_t> d;
    if (!dim.is_none()) d = dim.cast<int64_t>();
    return unique(t, inverse, counts, d);
  }, py::arg("input"), py::arg("return_inverse"), py::arg("return_counts"), py::arg("dim"));
  m.def("prod", [](const TensorPtr& t, const py::object& dim, bool keepdim, const py::object& dtype) {
    std::optional<int64_t> d;
    if (!dim.is_none()) d = dim.cast<int64_t>();
    return prod(t, d, keepdim, dtype_arg(dtype));
  }, py::arg("input"), py::arg("dim"), py::arg("keepdim"), py::arg("dtype"));
  m.def("std", [](const TensorPtr& t, const py::object& dim, double correction, bool keepdim) {
    return std_dev(t, dims_arg("std", dim), correction, keepdim);
  }, py::arg("input"), py::arg("dim"), py::arg("correction"), py::arg("keepdim"));
  m.def("logsumexp", [](const TensorPtr& t, const py::object& dim, bool keepdim) {
    return logsumexp(t, dims_arg("logsumexp", dim), keepdim);
  }, py::arg("input"), py::arg("dim"), py::arg("keepdim"));
  m.def("vector_norm", [](const TensorPtr& t, double ord, const py::object& dim, bool keepdim, const py::object& dtype) {
    return vector_norm(t, ord, dims_arg("linalg.vector_norm", dim), keepdim, dtype_arg(dtype));
  }, py::arg("input"), py::arg("ord"), py::arg("dim"), py::arg("keepdim"), py::arg("dtype"));
  m.def("count_nonzero", [](const TensorPtr& t, const py::object& dim) {
    return count_nonzero(t, dims_arg("count_nonzero", dim));
  }, py::arg("input"), py::arg("dim"));
  m.def("isclose", &isclose, py::arg("input"), py::arg("other"), py::arg("rtol"), py::arg("atol"), py::arg("equal_nan"));
  m.def("allclose", &allclose, py::arg("input"), py::arg("other"), py::arg("rtol"), py::arg("atol"),
        py::arg("equal_nan"));
  m.def("equal", &equal, py::arg("input"), py::arg("other"));
}

}  // namespace bm::bind
