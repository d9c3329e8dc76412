#include "core/dispatch.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "autograd/record.h"
#include "core/backend.h"
#include "core/determinism.h"
#include "core/errors.h"
#include "core/gil.h"
#include "core/ops.h"

namespace bm {

namespace {

std::string tag(const OpRow& row) { return std::string("[") + row.name + "] "; }

DType scalar_dtype(const Scalar& s) {
  return s.kind == Scalar::Float ? DType::Float64 : s.kind == Scalar::Int ? DType::Int64 : DType::Bool;
}

// Decides the dtype the kernel runs in (compute) and the output dtype.
std::pair<DType, DType> resolve_dtypes(OpId op, const std::vector<Operand>& xs, const OpArgs& args) {
  const OpRow& row = op_row(op);
  auto in0 = [&] { return xs[0].is_scalar() ? scalar_dtype(xs[0].s) : xs[0].t->dtype; };
  switch (row.dtype_rule) {
    case DTypeRule::Same: return {in0(), in0()};
    case DTypeRule::ToFloat: { DType d = is_floating(in0()) ? in0() : default_float_dtype(); return {d, d}; }
    case DTypeRule::Promote: { DType d = result_type(xs); return {d, d}; }
    case DTypeRule::PromoteFloat: {
      DType d = result_type(xs);
      if (!is_floating(d)) d = default_float_dtype();
      return {d, d};
    }
    case DTypeRule::Compare: return {result_type(xs), DType::Bool};
    case DTypeRule::Where: {
      DType c = xs[0].is_scalar() ? scalar_dtype(xs[0].s) : xs[0].t->dtype;
      if (c != DType::Bool)
        throw TypeError(tag(row) + "condition must be a bool tensor, got " + dtype_name(c));
      DType d = result_type({xs[1], xs[2]});
      return {d, d};
    }
    case DTypeRule::SumLike: { DType d = is_floating(in0()) ? in0() : DType::Int64; return {d, d}; }
    case DTypeRule::FloatOnly:
      if (!is_floating(in0()))
        throw UnsupportedError(tag(row) + "expected a floating point input, got " + dtype_name(in0()) +
                               "; convert it first, e.g. x.to(bessemer.float32)");
      return {in0(), in0()};
    case DTypeRule::Index: return {in0(), DType::Int64};
    case DTypeRule::Cast: return {args.out_dtype, args.out_dtype};
    case DTypeRule::Factory: return {args.out_dtype, args.out_dtype};
  }
  return {in0(), in0()};
}

std::string supported_list(DTypeMask m) {
  std::string s;
  for (int i = 0; i < kNumDTypes; ++i)
    if (m & (1u << i)) s += (s.empty() ? "" : ", ") + std::string(dtype_name(DType(i)));
  return s;
}

}  // namespace

void check_dtype_supported(OpId op, DType compute, Device* dev) {
  const OpRow& row = op_row(op);
  if (!(row.dtypes & bit(compute)))
    throw UnsupportedError(tag(row) + "dtype " + dtype_name(compute) + " is not supported (supported: " +
                           supported_list(row.dtypes) + ")");
  if (!dev->backend->kernel(op, compute))
    throw UnsupportedError(tag(row) + "dtype " + dtype_name(compute) + " is not supported on device " + dev->name);
}

namespace {

// Elementwise outputs keep the memory order of their first full-size input (as torch and numpy do),
// so `a.T + b` and `exp(a.T)` are written in a.T's order and every operand is read sequentially.
Shape layout_like_inputs(const std::vector<Operand>& xs, const Shape& shape, const Shape& contiguous) {
  if (shape.size() < 2) return contiguous;
  for (const Operand& x : xs) {
    if (x.is_scalar() || x.t->shape != shape) continue;
    if (x.t->is_contiguous()) return contiguous;
    size_t nd = shape.size();
    std::vector<size_t> perm(nd);
    for (size_t i = 0; i < nd; ++i) perm[i] = i;
    // Outermost first, torch's insertion sort: a dim with a larger |stride| goes outside; a size-1
    // dim gives no information, so the scan steps over it instead of stopping.
    auto order = [&](size_t a, size_t b) {  // +1: a (now outside b) belongs inside; -1: stays; 0: unknown
      if (shape[a] == 1 || shape[b] == 1) return 0;
      int64_t sa = std::abs(x.t->strides[a]), sb = std::abs(x.t->strides[b]);
      return sa < sb ? 1 : sa > sb ? -1 : 0;
    };
    for (size_t i = 1; i < nd; ++i) {
      size_t d1 = i;
      for (size_t d0 = i; d0-- > 0;) {
        int c = order(perm[d0], perm[d1]);
        if (c > 0) { std::swap(perm[d0], perm[d1]); d1 = d0; }
        else if (c < 0) break;
      }
    }
    Shape st(nd);
    int64_t acc = 1;
    for (size_t k = nd; k-- > 0;) {
      st[perm[k]] = acc;
      acc *= std::max<int64_t>(shape[perm[k]], 1);
    }
    return st;
  }
  return contiguous;
}

TensorPtr expand_to(const TensorPtr& t, const Shape& shape) {
  if (t->shape == shape) return t;
  return make_view(t, shape, broadcast_strides(t->shape, t->strides, shape), t->offset);
}

// Shape step. Returns the output shape; fills `kernel_out_shape` with the shape the kernel sees
// (reductions see keepdim shapes) and normalises args in place.
Shape infer_shape(OpId op, const std::vector<Operand>& xs, OpArgs& args, Shape* kernel_out_shape) {
  const OpRow& row = op_row(op);
  auto shape_of = [&](size_t i) { return xs[i].is_scalar() ? Shape{} : xs[i].t->shape; };
  Shape out;
  switch (row.shape_rule) {
    case ShapeRule::Elementwise: {
      // By reference, and broadcast only shapes that differ: no allocations for equal shapes.
      static const Shape kNoDims;
      auto ref = [&](size_t i) -> const Shape& { return xs[i].is_scalar() ? kNoDims : xs[i].t->shape; };
      out = xs.empty() ? Shape{} : ref(0);
      for (size_t i = 1; i < xs.size(); ++i)
        if (ref(i) != out) out = broadcast_shapes(row.name, out, ref(i));
      *kernel_out_shape = out;
      return out;
    }
    case ShapeRule::SameShape: {
      Shape s = shape_of(0);
      args.dim = normalize_dim(row.name, args.dim, int64_t(s.size()));
      *kernel_out_shape = s;
      return s;
    }
    case ShapeRule::Reduce: {
      Shape s = shape_of(0);
      int64_t nd = int64_t(s.size());
      std::vector<int64_t> dims;
      if (args.dims.empty()) {
        for (int64_t d = 0; d < nd; ++d) dims.push_back(d);
      } else {
        for (int64_t d : args.dims) {
          int64_t nd_ = normalize_dim(row.name, d, nd);
          if (std::find(dims.begin(), dims.end(), nd_) != dims.end())
            throw ValueError(tag(row) + "dim " + std::to_string(d) + " appears more than once in the list of dims");
          dims.push_back(nd_);
        }
        if (nd == 0) dims.clear();
      }
      std::sort(dims.begin(), dims.end());
      args.dims = dims;
      Shape keep = s;
      for (int64_t d : dims) keep[d] = 1;
      *kernel_out_shape = keep;
      if (args.keepdim) return keep;
      for (int64_t d = 0; d < nd; ++d)
        if (!std::binary_search(dims.begin(), dims.end(), d)) out.push_back(s[d]);
      return out;
    }
    case ShapeRule::Matmul: {
      // The op layer (matmul in ops_compute.cpp) has already made both inputs >= 2-D with equal
      // batch shapes; here we check the inner dims.
      Shape a = shape_of(0), b = shape_of(1);
      if (a[a.size() - 1] != b[b.size() - 2])
        throw ValueError(tag(row) + "shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be multiplied (" +
                         std::to_string(a.back()) + " != " + std::to_string(b[b.size() - 2]) + ")");
      out = a;
      out.back() = b.back();
      *kernel_out_shape = out;
      return out;
    }
    case ShapeRule::Given:
      break;
  }
  throw Error(tag(row) + "has no inferable shape");
}

}  // namespace

const char* input_name(OpId op, int i) {
  if (op == OpId::where) return i == 0 ? "condition" : i == 1 ? "input" : "other";
  return i == 0 ? "input" : i == 1 ? "other" : "arg";
}

void check_same_device(const char* op, const std::vector<std::pair<const char*, const Tensor*>>& named) {
  for (size_t i = 1; i < named.size(); ++i) {
    if (named[i].second->device() != named[0].second->device())
      throw DeviceMismatchError(std::string("[") + op + "] inputs are on different devices: " + named[0].first + " on " +
                                named[0].second->device()->name + ", " + named[i].first + " on " +
                                named[i].second->device()->name);
  }
}

DType result_type(const std::vector<Operand>& xs) {
  // Three priority groups as in torch: tensors with dims, 0-d tensors, Python numbers.
  std::optional<DType> dimmed, zero, wrapped;
  auto upd = [](std::optional<DType>& slot, DType d) { slot = slot ? promote_types(*slot, d) : d; };
  for (const Operand& x : xs) {
    if (x.is_scalar() || x.t->wrapped_number) {
      DType d = x.is_scalar() ? scalar_dtype(x.s) : x.t->dtype;
      upd(wrapped, is_floating(d) ? default_float_dtype() : d);
    } else if (x.t->shape.empty()) {
      upd(zero, x.t->dtype);
    } else {
      upd(dimmed, x.t->dtype);
    }
  }
  // A lower-priority group only wins when it is of a higher category (bool < int < float).
  auto category = [](DType d) { return d == DType::Bool ? 0 : is_floating(d) ? 2 : 1; };
  auto combine = [&](std::optional<DType> hi, std::optional<DType> lo) -> std::optional<DType> {
    if (!hi) return lo;
    if (!lo) return hi;
    return category(*lo) > category(*hi) ? promote_types(*hi, *lo) : *hi;
  };
  std::optional<DType> r = combine(dimmed, combine(zero, wrapped));
  return r ? *r : default_float_dtype();
}

namespace {

// Releasing the GIL costs about 0.1 us, and when another thread is waiting for it this thread may
// wait a switch interval to get it back: worth it only for kernels that take longer than that. A
// CPU kernel touching fewer than kGilWork elements (inputs and output) keeps it, as NumPy does for
// small arrays; a Metal launch always releases it, since encoding may wait for the queue's lock
// while another thread's command buffer runs, or commit (and on metal-sim run) a batch itself.
constexpr int64_t kGilWork = 16384;

bool releases_gil(const KernelCall& call, const Device& dev) {
  if (dev.type != DeviceType::CPU) return true;
  int64_t work = call.out->numel();
  for (int i = 0; i < call.nin; ++i) work += call.in[i]->numel();
  return work >= kGilWork;
}

TensorPtr execute(OpId op, const std::vector<Operand>& xs, OpArgs& args, const TensorPtr& out_user) {
  const OpRow& row = op_row(op);
  OpScope scope(row.name);  // named by OutOfMemoryError unless an outer op (conv2d, cat...) is running
  // 1. device. The common all-same case is checked without building the list of names (an
  // allocation per op); a mismatch builds it for check_same_device's message.
  Device* dev = nullptr;
  bool mixed = false;
  for (const Operand& x : xs)
    if (!x.is_scalar()) {
      if (!dev) dev = x.t->device();
      mixed |= x.t->device() != dev;
    }
  if (out_user) mixed |= dev && out_user->device() != dev;
  if (mixed) {
    std::vector<std::pair<const char*, const Tensor*>> named;
    for (size_t i = 0; i < xs.size(); ++i)
      if (!xs[i].is_scalar()) named.push_back({input_name(op, int(i)), xs[i].t.get()});
    if (out_user) named.push_back({"out", out_user.get()});
    check_same_device(row.name, named);
  }
  if (!dev) dev = out_user ? out_user->device() : cpu_device();
  // 2. dtype
  auto [compute, out_dtype] = resolve_dtypes(op, xs, args);
  check_dtype_supported(op, compute, dev);
  // Integer pow checks a negative Python-number exponent itself, as torch: converted to the compute
  // dtype first it could stop being negative (uint8 ** -1 would become ** 255).
  if (op == OpId::pow && is_integral(compute) && xs.size() == 2 && xs[1].is_scalar() &&
      xs[1].s.kind == Scalar::Int && xs[1].s.i < 0)
    throw ValueError("[pow] integers to negative integer powers are not allowed");
  // 3. shape
  Shape kshape;
  Shape out_shape = row.shape_rule == ShapeRule::Given ? out_user->shape : infer_shape(op, xs, args, &kshape);
  if (row.shape_rule == ShapeRule::Given) kshape = out_shape;
  if (out_user && out_user->shape != out_shape)
    throw ValueError(tag(row) + "output has shape " + shape_str(out_user->shape) + " but the result has shape " +
                     shape_str(out_shape));
  // 4. determinism: an op without a deterministic kernel here raises (or warns) under the flag.
  if (deterministic_algorithms_enabled()) check_deterministic(op, *dev);

  TensorPtr out = out_user;
  if (!out) {
    out = empty_tensor(out_shape, out_dtype, dev, /*kernel_output=*/true);  // written only by the kernel below
    if (row.shape_rule == ShapeRule::Elementwise) out->strides = layout_like_inputs(xs, out_shape, out->strides);
  }
  TensorPtr kout = out->shape == kshape ? out : make_view(out, kshape, contiguous_strides(kshape), out->offset);
  if (out->numel() == 0) return out;

  // Inputs in the compute dtype, materialised on the device, broadcast for elementwise ops.
  KernelCall call;
  std::array<TensorPtr, kMaxOpInputs> keep_alive;  // a fixed array: no allocation per op
  if (xs.size() > size_t(kMaxOpInputs))
    throw Error(tag(row) + "takes at most " + std::to_string(kMaxOpInputs) + " tensor inputs, got " +
                std::to_string(xs.size()));
  for (size_t i = 0; i < xs.size(); ++i) {
    TensorPtr t;
    bool cast_input = row.dtype_rule != DTypeRule::Cast && !(op == OpId::where && i == 0);
    DType want = cast_input ? compute : (xs[i].is_scalar() ? DType::Bool : xs[i].t->dtype);
    if (xs[i].is_scalar()) t = scalar_tensor(xs[i].s, want, dev);
    else t = xs[i].t->dtype == want ? xs[i].t : cast(xs[i].t, want);
    // An in-place write whose source overlaps its destination without being the same view
    // (x[1:].copy_(x[:-1])) reads from a copy, as NumPy does: otherwise the result would depend on
    // the order the kernel's threads run in, a data race on a GPU.
    if (out_user && !xs[i].is_scalar() && overlaps_partially(*t, *out_user)) {
      OpArgs copy_args;
      copy_args.out_dtype = t->dtype;
      t = execute(OpId::copy, {Operand(t)}, copy_args, nullptr);
    }
    if (row.shape_rule == ShapeRule::Elementwise) t = expand_to(t, out_shape);
    call.in[i] = t.get();
    keep_alive[i] = std::move(t);
  }
  call.nin = int(xs.size());
  call.out = kout.get();
  call.args = &args;

  // Empty-input shortcuts, only after every check has passed.
  if (row.shape_rule == ShapeRule::Reduce && call.in[0]->numel() == 0) {
    if (op == OpId::sum) { fill_into(kout, Scalar::from_int(0)); return out; }
    if (op == OpId::prod) { fill_into(kout, Scalar::from_int(1)); return out; }
    if (op == OpId::mean || op == OpId::var) { fill_into(kout, Scalar::from_double(NAN)); return out; }
    if (op == OpId::any || op == OpId::all) { fill_into(kout, Scalar::from_bool(op == OpId::all)); return out; }
    throw ValueError(tag(row) + "cannot reduce over a dimension of size zero (input shape " +
                     shape_str(call.in[0]->shape) + "); pass dims with non-zero size");
  }
  if (row.shape_rule == ShapeRule::Matmul && call.in[0]->shape.back() == 0) {
    fill_into(kout, Scalar::from_int(0));
    return out;
  }
  if (!releases_gil(call, *dev)) {
    dev->backend->kernel(op, compute)(call);
    return out;
  }
  WithoutGil nogil;  // other Python threads run while the kernel does (core/gil.h)
  dev->backend->kernel(op, compute)(call);
  return out;
}

}  // namespace

void run_op_into(OpId op, std::vector<Operand> xs, const OpArgs& args_in, const TensorPtr& out) {
  check_writable(op_row(op).name, *out);  // backstop: entry points check first, with their own names
  OpArgs args = args_in;
  execute(op, xs, args, out);
  out->storage->version++;  // an in-place write: tensors saved for backward from this memory are stale
}

TensorPtr run_op(OpId op, std::vector<Operand> xs, const OpArgs& args_in) {
  OpArgs args = args_in;  // normalised by execute (dims, dim), as the gradient rule needs them
  TensorPtr out = execute(op, xs, args, nullptr);
  if (should_record(xs)) record_op(op, xs, args, out);
  return out;
}

}  // namespace bm
