// Shape functions and gather / scatter (core/ops_shape.h). Python's _shape.py gives them torch's
// signatures and adds the view-only ones (split, chunk, movedim...) over existing views.
#include <optional>
#include <string>

#include "bindings/common.h"
#include "core/ops_shape.h"

namespace bm::bind {

void init_shape(py::module_& m) {
  m.def("diagonal", &diagonal, py::arg("input"), py::arg("offset") = 0, py::arg("dim1") = 0, py::arg("dim2") = 1);
  m.def("flip", [](const TensorPtr& t, const py::object& dims) { return flip(t, int_list_arg("flip", dims)); },
        py::arg("input"), py::arg("dims"));
  m.def("roll", [](const TensorPtr& t, const py::object& shifts, const py::object& dims) {
    return roll(t, int_list_arg("roll", shifts), dims.is_none() ? Dims{} : int_list_arg("roll", dims));
  }, py::arg("input"), py::arg("shifts"), py::arg("dims") = py::none());
  m.def("tril", [](const TensorPtr& t, int64_t d) { return tril_triu(t, d, false); }, py::arg("input"),
        py::arg("diagonal") = 0);
  m.def("triu", [](const TensorPtr& t, int64_t d) { return tril_triu(t, d, true); }, py::arg("input"),
        py::arg("diagonal") = 0);
  m.def("gather", &gather, py::arg("input"), py::arg("dim"), py::arg("index"));
  m.def("scatter", [](const TensorPtr& t, int64_t dim, const TensorPtr& index, const py::object& src,
                      const py::object& reduce) {
    return scatter(t, dim, index, operand_arg("scatter", src), reduce.is_none() ? "" : reduce.cast<std::string>());
  }, py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("src"), py::arg("reduce") = py::none());
  m.def("scatter_add", &scatter_add, py::arg("input"), py::arg("dim"), py::arg("index"), py::arg("src"));
  m.def("_repeat_interleave_index", [](const TensorPtr& repeats, std::optional<int64_t> size) {
    return repeat_interleave_index(repeats, size, "repeat_interleave");
  }, py::arg("repeats"), py::arg("size") = py::none());
}

}  // namespace bm::bind
