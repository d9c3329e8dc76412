// Shapes, strides (in elements) and the arithmetic on them shared by every op.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bm {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& s);  // throws OutOfMemoryError on overflow
Shape contiguous_strides(const Shape& shape);
bool strides_are_contiguous(const Shape& shape, const Shape& strides);
std::string shape_str(const Shape& s);  // "(2, 3)"
// Wraps a possibly negative dim into [0, ndim); IndexError naming the op otherwise.
int64_t normalize_dim(const char* op, int64_t dim, int64_t ndim);
// Broadcast two shapes (numpy/torch rules); ValueError naming the op and both shapes.
Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b);
// Strides that view a tensor of (shape, strides) as target shape (zero strides on broadcast dims).
Shape broadcast_strides(const Shape& shape, const Shape& strides, const Shape& target);
// Sizes given by the user, with -1 inferred; errors name the op.
Shape infer_size(const char* op, Shape sizes, int64_t numel);
// Strides for viewing (shape, strides) as new_shape without copying; empty result if impossible.
bool compute_view_strides(const Shape& shape, const Shape& strides, const Shape& new_shape,
                          Shape* out);

}  // namespace bm
