#include "autograd/inplace.h"

#include "autograd/record.h"
#include "autograd/rules.h"
#include "core/errors.h"
#include "core/ops.h"
#include "core/ops_index.h"

namespace bm {

namespace {

std::string tag(const char* op) { return std::string("[") + op + "] "; }

int category(DType d) { return d == DType::Bool ? 0 : is_floating(d) ? 2 : 1; }

// torch refuses an in-place result of a higher category than self (a float result into an int tensor).
void check_result_fits(const char* op, DType result, DType self) {
  if (category(result) > category(self))
    throw TypeError(tag(op) + "result type " + dtype_name(result) + " can't be cast to the desired output type " +
                    dtype_name(self));
}

void check_shape_fits(const char* op, const TensorPtr& self, const Shape& other) {
  Shape b = broadcast_shapes(op, self->shape, other);
  if (b != self->shape)
    throw ValueError(tag(op) + "output with shape " + shape_str(self->shape) +
                     " doesn't match the broadcast shape " + shape_str(b));
}

// A tensor laid out over fresh memory exactly as `like` lies in its storage (same offset and
// strides), so a view's geometry applies to it unchanged.
TensorPtr storage_like(const TensorPtr& like, const TensorPtr& layout) {
  int64_t n = int64_t(like->storage->nbytes / itemsize(like->dtype));
  TensorPtr mem = full({n}, Scalar::from_int(0), like->dtype, like->device());
  return make_view(mem, layout->shape, layout->strides, layout->offset);
}

void no_double_backward(const TensorPtr&) {
  if (grad_enabled())
    throw UnsupportedError("[backward] create_graph through an in-place write into a view (CopySlices) is not "
                           "supported; write out of place");
}

}  // namespace

void check_inplace(const char* op, const TensorPtr& self) {
  check_writable(op, *self);  // in every grad mode: read-only memory is never written
  if (!grad_enabled()) return;
  if (requires_grad(*self) && is_leaf(*self))
    throw Error(tag(op) + "a leaf tensor that requires grad is being used in an in-place operation; do it under "
                          "`with bessemer.no_grad():` (as optimizers do) or use the out-of-place op");
  const TensorPtr& base = self->view_base;
  if (base && requires_grad(*base) && is_leaf(*base))
    throw Error(tag(op) + "a view of a leaf tensor that requires grad is being used in an in-place operation; do it "
                          "under `with bessemer.no_grad():` or use the out-of-place op");
}

bool inplace_needs_graph(const TensorPtr& self, const std::vector<Operand>& sources) {
  if (!grad_enabled()) return false;
  if (requires_grad(*self) || (self->view_base && requires_grad(*self->view_base))) return true;
  for (const Operand& s : sources)
    if (!s.is_scalar() && requires_grad(*s.t)) return true;
  return false;
}

TensorPtr commit_inplace(const char* op, const TensorPtr& self, TensorPtr r) {
  check_inplace_target(op, *self);
  if (r->dtype != self->dtype) r = cast(r, self->dtype);
  {
    GradModeGuard off(false);
    copy_into(self, r);  // bumps the version
  }
  if (!grad_enabled()) return self;
  if (!requires_grad(*r) && !requires_grad(*self) && !(self->view_base && requires_grad(*self->view_base)))
    return self;
  if (!requires_grad(*r)) {
    // The new value is a constant (fill_, copy_ from a tensor without history): the old value gets
    // no gradient, but the tensor stays part of the graph, as in torch.
    TensorPtr src = self;
    r = detach(r);
    record_fn("FillBackward0", {src}, r, [](const TensorPtr&) { return std::vector<TensorPtr>{nullptr}; });
  }
  const TensorPtr& base = self->view_base;
  if (!base) {
    set_history(self, r->autograd->grad_fn);
    return self;
  }
  // A view: the base's new history replaces the view's region with r.
  TensorPtr view_geom = detach(self);
  record_fn("CopySlices", {base, r}, base, [view_geom, b = detach(base)](const TensorPtr& g) {
    no_double_backward(g);
    TensorPtr gb = storage_like(b, b);
    TensorPtr region = make_view(gb, view_geom->shape, view_geom->strides, view_geom->offset);
    copy_into(gb, g);
    TensorPtr gr = clone(region);
    fill_into(region, Scalar::from_int(0));
    return std::vector<TensorPtr>{gb, gr};
  });
  // ...and the view reads the new base.
  record_fn("AsStridedBackward0", {base}, self, [view_geom, b = detach(base)](const TensorPtr& g) {
    no_double_backward(g);
    TensorPtr gb = storage_like(b, b);
    copy_into(make_view(gb, view_geom->shape, view_geom->strides, view_geom->offset), g);
    return std::vector<TensorPtr>{gb};
  });
  return self;
}

TensorPtr inplace_binary(OpId op, const TensorPtr& self, const Operand& other) {
  std::string name = std::string(op_row(op).name) + "_";
  check_inplace_target(name.c_str(), *self);
  if (!other.is_scalar()) check_same_device(name.c_str(), {{"self", self.get()}, {"other", other.t.get()}});
  check_inplace(name.c_str(), self);
  DType rt = result_type({self, other});
  check_result_fits(name.c_str(), rt, self->dtype);
  if (!other.is_scalar()) check_shape_fits(name.c_str(), self, other.t->shape);
  if (!inplace_needs_graph(self, {other})) {
    if (rt == self->dtype && (op_row(op).dtype_rule != DTypeRule::PromoteFloat || is_floating(rt))) {
      run_op_into(op, {self, other}, OpArgs{}, self);
    } else {
      TensorPtr r = binary(op, self, other);
      copy_into(self, r);
    }
    return self;
  }
  // The rule may save its input: give it a copy of self's old value, which the write below keeps.
  return commit_inplace(name.c_str(), self, binary(op, clone(self), other));
}

TensorPtr inplace_unary(OpId op, const TensorPtr& self) {
  const std::string name = std::string(op_row(op).name) + "_";
  check_inplace_target(name.c_str(), *self);
  check_inplace(name.c_str(), self);
  const bool same_dtype = op_row(op).dtype_rule == DTypeRule::Same || is_floating(self->dtype);
  if (!inplace_needs_graph(self, {})) {
    // The kernel reads each element before writing it: no copy, no second pass over memory.
    if (same_dtype) {
      run_op_into(op, {self}, OpArgs{}, self);
    } else {
      TensorPtr r = unary(op, self);  // its own dtype checks (an int input of a float-only op)
      check_result_fits(name.c_str(), r->dtype, self->dtype);
      copy_into(self, r);
    }
    return self;
  }
  const GradRule* rule = op_row(op).grad;
  if (same_dtype && !self->view_base && rule && !rule->recorded_by_op && !(rule->save_inputs & kSaveIn0)) {
    // A rule that needs no input (relu, sigmoid, exp: the output or nothing): as torch, the kernel
    // writes self, and the node takes self's old history as its input and saves self, after the
    // write, as its output (a later write into self makes backward refuse it).
    run_op_into(op, {self}, OpArgs{}, self);
    record_op(op, {self}, OpArgs{}, self);
    return self;
  }
  // The rule may save its input: give it a copy of self's old value, which the write below keeps.
  TensorPtr r = unary(op, clone(self));
  check_result_fits(name.c_str(), r->dtype, self->dtype);
  return commit_inplace(name.c_str(), self, r);
}

TensorPtr inplace_clamp(const TensorPtr& self, std::optional<Scalar> min, std::optional<Scalar> max) {
  check_inplace_target("clamp_", *self);
  check_inplace("clamp_", self);
  const bool graph = inplace_needs_graph(self, {});
  if (!graph) {
    DType dt;
    const OpArgs a = clamp_args("clamp_", self, min, max, &dt);
    if (dt == self->dtype) {  // written in place: no copy, no second pass over memory
      run_op_into(OpId::clamp, {self}, a, self);
      return self;
    }
  }
  // With a graph the rule may save its input: clamp a copy of self's old value (the write below keeps it).
  TensorPtr r = clamp(graph ? clone(self) : self, min, max);  // argument checks and promotion as clamp
  check_result_fits("clamp_", r->dtype, self->dtype);
  if (!graph) {
    copy_into(self, r);
    return self;
  }
  return commit_inplace("clamp_", self, r);
}

TensorPtr inplace_fill(const TensorPtr& self, Scalar value) {
  check_inplace("fill_", self);
  check_fill_value("fill_", value, self->dtype);
  if (!inplace_needs_graph(self, {})) {
    fill_into(self, value);
    return self;
  }
  return commit_inplace("fill_", self, full(self->shape, value, self->dtype, self->device()));
}

TensorPtr inplace_copy(const TensorPtr& self, const TensorPtr& src_in) {
  check_inplace_target("copy_", *self);
  check_inplace("copy_", self);
  check_shape_fits("copy_", self, src_in->shape);
  TensorPtr src = src_in->device() == self->device() ? src_in : to_device(src_in, self->device());
  if (!inplace_needs_graph(self, {src_in})) {
    copy_into(self, expand(src, Dims(self->shape.begin(), self->shape.end())));
    return self;
  }
  TensorPtr r = expand(cast(src, self->dtype), Dims(self->shape.begin(), self->shape.end()));
  return commit_inplace("copy_", self, r);
}

void index_put_autograd(const TensorPtr& t, const std::vector<TensorIndex>& idx, const Operand& value) {
  check_inplace("index_put_", t);
  if (!inplace_needs_graph(t, {value})) {
    index_put_(t, idx, value);
    return;
  }
  TensorPtr r;
  {
    GradModeGuard off(false);
    r = clone(t);
    index_put_(r, idx, value);
  }
  TensorPtr v = value.is_scalar() ? nullptr : value.t;
  Shape vshape = v ? v->shape : Shape{};
  record_saved_fn("IndexPutBackward0", {t, v}, r, {}, [idx, vshape](const TensorPtr& g, const std::vector<TensorPtr>&,
                                                                    const std::vector<bool>& need) {
    TensorPtr gt, gv;
    if (need[0]) {  // the overwritten positions get nothing
      gt = clone(g);
      index_put_(gt, idx, Operand(Scalar::from_int(0)));
    }
    if (need[1]) {  // the value was broadcast to the indexed shape (its extra leading 1s dropped)
      TensorPtr gi = index(g, idx);
      Shape core = vshape;
      while (core.size() > gi->shape.size() && !core.empty() && core[0] == 1) core.erase(core.begin());
      gv = reshape(sum_to(gi, core), Dims(vshape.begin(), vshape.end()));
    }
    return std::vector<TensorPtr>{gt, gv};
  });
  commit_inplace("index_put_", t, r);
}

}  // namespace bm
