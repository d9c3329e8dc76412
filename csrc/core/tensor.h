// A tensor is a view: (storage, offset, shape, strides, dtype). Offsets and strides count elements.
#pragma once
#include <memory>

#include "core/device.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/storage.h"

namespace bm {

struct Tensor;
struct AutogradMeta;
using TensorPtr = std::shared_ptr<Tensor>;

struct Tensor {
  std::shared_ptr<Storage> storage;
  int64_t offset = 0;
  Shape shape;
  Shape strides;
  DType dtype = DType::Float32;
  // Made from a Python number: lowest priority in type promotion (torch's "wrapped number").
  bool wrapped_number = false;
  // Autograd state (csrc/autograd/node.h); null for tensors autograd never touched.
  std::shared_ptr<AutogradMeta> autograd;
  // The tensor a view op made this one from (the root of a chain of views), so an in-place write
  // through the view can rewrite the base's history; null for tensors that own their layout.
  TensorPtr view_base;

  Device* device() const { return storage->device; }
  int64_t ndim() const { return int64_t(shape.size()); }
  int64_t numel() const { return shape_numel(shape); }
  bool is_contiguous() const { return strides_are_contiguous(shape, strides); }
  template <typename T> T* data() const { return reinterpret_cast<T*>(storage->data) + offset; }
  char* bytes() const { return static_cast<char*>(storage->data) + offset * int64_t(itemsize(dtype)); }
};

// Fresh contiguous tensor on `device` (uninitialised memory). MemoryError if it cannot be had.
// kernel_output: only kernels will write it, never the host directly (Backend::allocate_kernel_output).
TensorPtr empty_tensor(const Shape& shape, DType dtype, Device* device, bool kernel_output = false);
// A view sharing t's storage.
TensorPtr make_view(const TensorPtr& t, const Shape& shape, const Shape& strides, int64_t offset);
// The one check in front of every write into existing memory: RuntimeError naming `op` when t's
// storage is read-only (it belongs to a read-only NumPy array). In-place entry points call it
// before they write anything; run_op_into calls it again for every write, as a backstop.
void check_writable(const char* op, const Tensor& t);
// check_writable, plus torch's refusal of an in-place write into a tensor several of whose
// elements share one memory location (a stride of 0 over a dim of size > 1, e.g. from expand()).
void check_inplace_target(const char* op, const Tensor& t);
// True when a and b share memory but are not the same view: some element of one sits where a
// different element of the other does (x[1:] and x[:-1]). An op that reads one while writing the
// other would then depend on the order its threads run in (a data race on a GPU).
bool overlaps_partially(const Tensor& a, const Tensor& b);

}  // namespace bm
