#include "core/tensor.h"

#include "core/backend.h"
#include "core/errors.h"

namespace bm {

TensorPtr empty_tensor(const Shape& shape, DType dtype, Device* device, bool kernel_output) {
  OpScope scope("empty");  // when no op is running (bm.empty)
  for (int64_t d : shape)
    if (d < 0) throw ValueError("[empty] negative dimension " + std::to_string(d) + " in shape " + shape_str(shape));
  // A device holds a dtype iff it can copy it (Metal has no float64).
  if (!device->backend->kernel(OpId::copy, dtype))
    throw UnsupportedError("[empty] dtype " + std::string(dtype_name(dtype)) + " is not supported on device " + device->name);
  int64_t n;
  try {
    n = shape_numel(shape);
  } catch (const OutOfMemoryError&) {
    throw OutOfMemoryError("[empty] shape " + shape_str(shape) + " is too large to allocate");
  }
  int64_t isz = int64_t(itemsize(dtype));
  if (n > INT64_MAX / isz) throw OutOfMemoryError("[empty] shape " + shape_str(shape) + " is too large to allocate");
  auto t = std::make_shared<Tensor>();
  const size_t nbytes = size_t(n * isz);
  t->storage = kernel_output ? device->backend->allocate_kernel_output(nbytes) : device->backend->allocate(nbytes);
  t->shape = shape;
  t->strides = contiguous_strides(shape);
  t->dtype = dtype;
  return t;
}

TensorPtr make_view(const TensorPtr& t, const Shape& shape, const Shape& strides, int64_t offset) {
  auto v = std::make_shared<Tensor>();
  v->storage = t->storage;
  v->offset = offset;
  v->shape = shape;
  v->strides = strides;
  v->dtype = t->dtype;
  return v;
}

void check_writable(const char* op, const Tensor& t) {
  if (t.storage->readonly)
    throw Error(std::string("[") + op + "] cannot write into a read-only tensor (its memory belongs to a read-only "
                "NumPy array); write into a copy made with .clone(), or make the tensor with bessemer.tensor(array), "
                "which copies");
}

void check_inplace_target(const char* op, const Tensor& t) {
  check_writable(op, t);
  for (size_t i = 0; i < t.shape.size(); ++i)
    if (t.strides[i] == 0 && t.shape[i] > 1)
      throw ValueError(std::string("[") + op + "] unsupported operation: more than one element of the written-to "
                       "tensor refers to a single memory location; clone() it first");
}

namespace {
// The byte range [lo, hi) that t's elements span (empty for an empty tensor).
std::pair<int64_t, int64_t> byte_span(const Tensor& t) {
  int64_t lo = t.offset, hi = t.offset;
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (t.shape[i] == 0) return {0, 0};
    int64_t reach = (t.shape[i] - 1) * t.strides[i];
    (reach < 0 ? lo : hi) += reach;
  }
  int64_t size = int64_t(itemsize(t.dtype));
  return {lo * size, (hi + 1) * size};
}
}  // namespace

bool overlaps_partially(const Tensor& a, const Tensor& b) {
  if (a.storage != b.storage) return false;
  if (a.offset == b.offset && a.shape == b.shape && a.strides == b.strides && a.dtype == b.dtype) return false;
  auto [alo, ahi] = byte_span(a);
  auto [blo, bhi] = byte_span(b);
  return alo < ahi && blo < bhi && alo < bhi && blo < ahi;  // conservative: interleaved views count too
}

}  // namespace bm
