#include "core/shape.h"

#include <algorithm>

#include "core/errors.h"

namespace bm {

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw ValueError("negative dimension in shape " + shape_str(s));
    if (d != 0 && n > INT64_MAX / d) throw OutOfMemoryError("shape " + shape_str(s) + " has too many elements");
    n *= d;
  }
  return n;
}

Shape contiguous_strides(const Shape& shape) {
  Shape st(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  return st;
}

bool strides_are_contiguous(const Shape& shape, const Shape& strides) {
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 0) return true;
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  if (s.size() == 1) r += ",";
  return r + ")";
}

int64_t normalize_dim(const char* op, int64_t dim, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);  // a 0-d tensor accepts dim 0 and -1, as in torch
  if (dim < -n || dim >= n)
    throw IndexError(std::string("[") + op + "] dim " + std::to_string(dim) + " is out of range for a tensor with " +
                     std::to_string(ndim) + " dims (expected in [" + std::to_string(-n) + ", " + std::to_string(n - 1) + "])");
  return dim < 0 ? dim + n : dim;
}

Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw ValueError(std::string("[") + op + "] shapes " + shape_str(a) + " and " + shape_str(b) +
                       " cannot be broadcast together (dim " + std::to_string(i) + ": " + std::to_string(da) +
                       " vs " + std::to_string(db) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_strides(const Shape& shape, const Shape& strides, const Shape& target) {
  Shape out(target.size(), 0);
  size_t off = target.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) out[off + i] = shape[i] == 1 ? 0 : strides[i];
  return out;
}

Shape infer_size(const char* op, Shape sizes, int64_t numel) {
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (infer >= 0) throw ValueError(std::string("[") + op + "] only one dimension can be inferred (-1)");
      infer = int64_t(i);
    } else if (sizes[i] < 0) {
      throw ValueError(std::string("[") + op + "] invalid size " + std::to_string(sizes[i]) + " in shape " + shape_str(sizes));
    } else {
      known *= sizes[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      throw ValueError(std::string("[") + op + "] shape " + shape_str(sizes) + " is invalid for input of size " +
                       std::to_string(numel));
    sizes[infer] = numel / known;
  } else if (known != numel) {
    throw ValueError(std::string("[") + op + "] shape " + shape_str(sizes) + " is invalid for input of size " +
                     std::to_string(numel));
  }
  return sizes;
}

// Groups old dims into chunks that are contiguous among themselves and maps each chunk onto the
// new dims with the same element count (the algorithm torch's computeStride uses).
bool compute_view_strides(const Shape& shape, const Shape& strides, const Shape& new_shape, Shape* out) {
  out->assign(new_shape.size(), 0);
  if (shape.empty()) {  // 0-d: every new dim has size 1
    *out = contiguous_strides(new_shape);
    return true;
  }
  int64_t numel = shape_numel(shape);
  if (numel == 0) {
    *out = contiguous_strides(new_shape);
    return true;
  }
  int64_t view_d = int64_t(new_shape.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t td = int64_t(shape.size()) - 1; td >= 0; td--) {
    tensor_numel *= shape[td];
    if (td == 0 || (shape[td - 1] != 1 && strides[td - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        (*out)[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_shape[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return false;
      if (td > 0) {
        chunk_base_stride = strides[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

}  // namespace bm
