// Factories, copies, casts, device transfers, cat and stack.
#include <cmath>
#include <cstring>

#include "core/backend.h"
#include "core/errors.h"
#include "core/gil.h"
#include "core/ops.h"
#include "autograd/record.h"

namespace bm {

void fill_into(const TensorPtr& out, Scalar value) {
  OpArgs a;
  a.s0 = value;
  a.has_s0 = true;
  a.out_dtype = out->dtype;
  run_op_into(OpId::fill, {}, a, out);
}

TensorPtr scalar_tensor(Scalar value, DType dtype, Device* device) {
  TensorPtr t = empty_tensor({}, dtype, device);
  // Written from the host: a fresh allocation has no queued work on any device, and every device's
  // memory is host-addressable. Saves a whole fill op per Python number in `x + 2`.
  visit_dtype(dtype, [&](auto v) {
    using T = decltype(v);
    *t->data<T>() = value.to<T>();
  });
  return t;
}

void check_fill_value(const char* op, Scalar value, DType dtype) {
  // torch's rule (c10 checked_convert): the value must lie in the dtype's range. A Python int may
  // also go into an unsigned dtype down to -max (it wraps, as in C: fill_(-1) on uint8 gives 255);
  // infinity and NaN fit only floating dtypes.
  if (dtype == DType::Bool || dtype == DType::Int64 || dtype == DType::Float64 || value.kind == Scalar::Bool) return;
  double lo = 0, hi = 0;
  switch (dtype) {
    case DType::Int8: lo = -128, hi = 127; break;
    case DType::UInt8: lo = 0, hi = 255; break;
    case DType::Int16: lo = -32768, hi = 32767; break;
    case DType::Int32: lo = -2147483648.0, hi = 2147483647.0; break;
    case DType::Float16: hi = 65504.0; break;
    case DType::BFloat16: hi = 3.3895313892515355e38; break;
    default: hi = 3.4028234663852886e38; break;  // float32
  }
  if (is_floating(dtype)) lo = -hi;
  bool ok;
  if (value.kind == Scalar::Int)
    ok = double(value.i) <= hi && double(value.i) >= (dtype == DType::UInt8 ? -hi : lo);
  else if (!std::isfinite(value.f))
    ok = is_floating(dtype);
  else
    ok = value.f >= lo && value.f <= hi;
  if (ok) return;
  std::string v = value.kind == Scalar::Float ? std::to_string(value.f) : std::to_string(value.i);
  throw Error("[" + std::string(op) + "] value " + v + " cannot be converted to " + dtype_name(dtype) +
              " without overflow");
}

TensorPtr full(const Shape& shape, Scalar value, DType dtype, Device* device) {
  OpScope scope("full");  // named by OutOfMemoryError
  check_fill_value("full", value, dtype);
  TensorPtr t = empty_tensor(shape, dtype, device);
  fill_into(t, value);
  return t;
}

TensorPtr arange(Scalar start, Scalar end, Scalar step, std::optional<DType> dtype, Device* device) {
  OpScope scope("arange");  // named by OutOfMemoryError
  bool any_float = start.kind == Scalar::Float || end.kind == Scalar::Float || step.kind == Scalar::Float;
  DType dt = dtype ? *dtype : any_float ? default_float_dtype() : DType::Int64;
  double st = step.to<double>(), a = start.to<double>(), b = end.to<double>();
  if (st == 0) throw ValueError("[arange] step must be nonzero");
  if (!std::isfinite(a) || !std::isfinite(b)) throw ValueError("[arange] start and end must be finite");
  if ((st > 0 && b < a) || (st < 0 && b > a))
    throw ValueError("[arange] upper bound and step sign are inconsistent (start=" + std::to_string(a) +
                     ", end=" + std::to_string(b) + ", step=" + std::to_string(st) + ")");
  int64_t n;
  if (!any_float) {
    int64_t s = step.i, lo = start.i, hi = end.i;
    n = s > 0 ? (hi - lo + s - 1) / s : (lo - hi + (-s) - 1) / (-s);
  } else {
    n = int64_t(std::ceil((b - a) / st));
  }
  TensorPtr t = empty_tensor({std::max<int64_t>(n, 0)}, dt, device);
  OpArgs args;
  args.s0 = start;
  args.s1 = step;
  args.has_s0 = args.has_s1 = true;
  args.out_dtype = dt;
  run_op_into(OpId::arange, {}, args, t);
  return t;
}

void copy_into(const TensorPtr& dst, const TensorPtr& src) {
  OpArgs a;
  a.out_dtype = dst->dtype;
  run_op_into(OpId::copy, {src}, a, dst);
}

TensorPtr cast(const TensorPtr& t, DType dtype) {
  if (t->dtype == dtype) return t;
  OpArgs a;
  a.out_dtype = dtype;
  return run_op(OpId::copy, {t}, a);
}

TensorPtr clone(const TensorPtr& t) {
  OpArgs a;
  a.out_dtype = t->dtype;
  return run_op(OpId::copy, {t}, a);
}

TensorPtr contiguous(const TensorPtr& t) {
  OpScope scope("contiguous");  // named by OutOfMemoryError
  if (t->is_contiguous()) return t;
  TensorPtr out = empty_tensor(t->shape, t->dtype, t->device());  // clone would keep t's memory order
  copy_into(out, t);
  if (grad_enabled() && requires_grad(*t))
    record_fn("CloneBackward0", {t}, out, [](const TensorPtr& g) { return std::vector<TensorPtr>{g}; });
  return out;
}

// A device wait lets other Python threads run (core/gil.h); the CPU has nothing to wait for (its
// kernels run synchronously), so it keeps the GIL rather than pay for a release on every read.
void wait_readable(const Tensor& t) {
  Backend& be = *t.device()->backend;
  if (t.device()->type == DeviceType::CPU) return be.wait_for(*t.storage);
  WithoutGil nogil;
  be.wait_for(*t.storage);
}

void synchronize(Device* device) {
  std::vector<Device*> devices = device ? std::vector<Device*>{device} : available_devices();
  for (Device* d : devices) {
    if (d->type == DeviceType::CPU) {
      d->backend->synchronize();
      continue;
    }
    WithoutGil nogil;
    d->backend->synchronize();
  }
}

TensorPtr to_device(const TensorPtr& t, Device* device) {
  OpScope scope("to");  // named by OutOfMemoryError
  if (t->device() == device) return t;
  if (!device->backend->kernel(OpId::copy, t->dtype))
    throw UnsupportedError("[to] dtype " + std::string(dtype_name(t->dtype)) + " is not supported on device " +
                           device->name + "; convert it first, e.g. .to(bessemer.float32)");
  // Every device's memory is host-addressable (cpu, Metal shared storage, the simulator), so a
  // transfer is: finish the producer's work, then copy the contiguous bytes.
  TensorPtr src = contiguous(t);
  wait_readable(*src);
  TensorPtr out = empty_tensor(src->shape, src->dtype, device);
  size_t n = size_t(src->numel()) * itemsize(src->dtype);
  if (n) std::memcpy(out->bytes(), src->bytes(), n);
  if (grad_enabled() && requires_grad(*t)) {
    Device* from = t->device();  // the gradient flows back to the source device
    record_fn("ToCopyBackward0", {t}, out, [from](const TensorPtr& g) { return std::vector<TensorPtr>{to_device(g, from)}; });
  }
  return out;
}

TensorPtr from_host(const void* data, const Shape& shape, const Shape& byte_strides, DType dtype, Device* device) {
  OpScope scope("tensor");  // named by OutOfMemoryError
  int64_t isz = int64_t(itemsize(dtype));
  Shape strides(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (byte_strides[i] % isz != 0) throw ValueError("[tensor] source strides must be multiples of the item size");
    strides[i] = byte_strides[i] / isz;
  }
  // Borrow the caller's memory as a cpu tensor (no release: the caller keeps it alive for the copy).
  auto st = std::make_shared<Storage>();
  st->device = cpu_device();
  st->data = const_cast<void*>(data);
  auto borrowed = std::make_shared<Tensor>();
  borrowed->storage = st;
  borrowed->shape = shape;
  borrowed->strides = strides;
  borrowed->dtype = dtype;
  TensorPtr host = clone(borrowed);
  return to_device(host, device);
}

namespace {
// DeviceMismatchError naming the op and the first two tensors on different devices.
void check_list_devices(const char* op, const std::vector<TensorPtr>& ts) {
  std::vector<std::string> names;
  for (size_t i = 0; i < ts.size(); ++i) names.push_back("tensors[" + std::to_string(i) + "]");
  std::vector<std::pair<const char*, const Tensor*>> named;
  for (size_t i = 0; i < ts.size(); ++i) named.push_back({names[i].c_str(), ts[i].get()});
  check_same_device(op, named);
}
}  // namespace

TensorPtr cat(const std::vector<TensorPtr>& ts, int64_t dim) {
  OpScope scope("cat");  // named by OutOfMemoryError
  if (ts.empty()) throw ValueError("[cat] expected a non-empty list of tensors");
  check_list_devices("cat", ts);
  std::vector<Operand> ops(ts.begin(), ts.end());
  DType dt = result_type(ops);
  // torch skips legacy empty 1-D tensors of shape (0,) when the others have more dims.
  std::vector<TensorPtr> parts;
  for (auto& t : ts)
    if (!(t->ndim() == 1 && t->shape[0] == 0)) parts.push_back(t);
  if (parts.empty()) return empty_tensor({0}, dt, ts[0]->device());
  const Shape& ref = parts[0]->shape;
  if (ref.empty()) throw ValueError("[cat] zero-dimensional tensors cannot be concatenated");
  dim = normalize_dim("cat", dim, int64_t(ref.size()));
  Shape out_shape = ref;
  out_shape[dim] = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Shape& s = parts[i]->shape;
    bool ok = s.size() == ref.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = int64_t(d) == dim || s[d] == ref[d];
    if (!ok)
      throw ValueError("[cat] sizes of tensors must match except in dim " + std::to_string(dim) + ": got " +
                       shape_str(ref) + " and " + shape_str(s));
    out_shape[dim] += s[dim];
  }
  TensorPtr out = empty_tensor(out_shape, dt, ts[0]->device());
  int64_t pos = 0;
  {
    GradModeGuard off(false);
    for (auto& t : parts) {
      int64_t len = t->shape[dim];
      if (len) copy_into(slice(out, dim, pos, pos + len, 1), t);
      pos += len;
    }
  }
  bool record = false;
  for (auto& t : parts) record |= grad_enabled() && requires_grad(*t);
  if (record) {
    std::vector<int64_t> lens;
    for (auto& t : parts) lens.push_back(t->shape[dim]);
    record_fn("CatBackward0", parts, out, [lens, dim](const TensorPtr& g) {
      std::vector<TensorPtr> gs;
      int64_t p = 0;
      for (int64_t len : lens) { gs.push_back(slice(g, dim, p, p + len, 1)); p += len; }
      return gs;
    });
  }
  return out;
}

TensorPtr stack(const std::vector<TensorPtr>& ts, int64_t dim) {
  OpScope scope("stack");  // named by OutOfMemoryError
  if (ts.empty()) throw ValueError("[stack] expected a non-empty list of tensors");
  check_list_devices("stack", ts);  // devices first, before the shape check below
  for (size_t i = 1; i < ts.size(); ++i)
    if (ts[i]->shape != ts[0]->shape)
      throw ValueError("[stack] expects each tensor to be equal size, but got " + shape_str(ts[0]->shape) +
                       " at entry 0 and " + shape_str(ts[i]->shape) + " at entry " + std::to_string(i));
  dim = normalize_dim("stack", dim, ts[0]->ndim() + 1);
  std::vector<TensorPtr> u;
  for (auto& t : ts) u.push_back(unsqueeze(t, dim));
  return cat(u, dim);
}

}  // namespace bm
