#include "autograd/record.h"

#include <array>

#include "autograd/rules.h"
#include "core/errors.h"
#include "core/ops.h"

namespace bm {

namespace {

// A registry op's node: runs the op's rule, then fits each gradient to its input. Recording must
// cost well under a microsecond, so inputs live in a fixed array and an input's shape is stored only
// when it differs from the output's (broadcasting).
constexpr size_t kMaxRuleInputs = 6;

class OpNode final : public Node {
 public:
  OpNode(OpId op, const GradRule* rule, const std::vector<Operand>& xs, const OpArgs& args, const TensorPtr& out)
      : op_(op), rule_(rule), args_(args), n_(xs.size()) {
    if (n_ > kMaxRuleInputs) throw Error(std::string("[") + op_row(op).name + "] too many inputs for a rule");
    next.resize(n_);
    for (size_t i = 0; i < n_; ++i) {
      Slot& sl = slots_[i];
      sl.is_scalar = xs[i].is_scalar();
      if (sl.is_scalar) { sl.s = xs[i].s; continue; }
      const TensorPtr& t = xs[i].t;
      sl.dtype = t->dtype;
      sl.device = t->device();
      sl.same_shape = t->shape == out->shape;
      if (!sl.same_shape) sl.shape = t->shape;
      next[i] = is_floating(t->dtype) ? gradient_edge(t) : Edge{};
      if (rule->save_inputs & (1u << i)) sl.saved = SavedTensor(t, false);
    }
    if (rule->save_output) saved_out_ = SavedTensor(out, true);
  }
  std::string name() const override { return rule_->node_name; }
  void release_saved() override {
    for (size_t i = 0; i < n_; ++i) slots_[i].saved.reset();
    saved_out_.reset();
  }
  std::vector<TensorPtr> apply(const TensorPtr& grad) override {
    std::vector<TensorGeometry> geoms(n_);
    for (size_t i = 0; i < n_; ++i)
      if (!slots_[i].is_scalar) geoms[i] = {slots_[i].same_shape ? out.shape : slots_[i].shape, slots_[i].dtype,
                                            slots_[i].device};
    GradCtx ctx{op_, args_, {}, std::move(geoms), {}, saved_out_.unpack(*this), grad};
    ctx.inputs.reserve(n_);
    ctx.needs.resize(n_);
    for (size_t i = 0; i < n_; ++i) {
      ctx.needs[i] = next[i].valid();
      if (slots_[i].is_scalar) ctx.inputs.emplace_back(slots_[i].s);
      else ctx.inputs.emplace_back(slots_[i].saved.unpack(*this));
    }
    std::vector<TensorPtr> g = rule_->fn(ctx);
    g.resize(n_);
    for (size_t i = 0; i < n_; ++i) {
      if (!next[i].valid() || !g[i]) { g[i] = nullptr; continue; }
      const Shape& want = ctx.geoms[i].shape;
      if (g[i]->shape != want) g[i] = sum_to(g[i], want);
      if (g[i]->dtype != slots_[i].dtype) g[i] = cast(g[i], slots_[i].dtype);
    }
    return g;
  }

 private:
  struct Slot {
    SavedTensor saved;
    Scalar s;
    bool is_scalar = false, same_shape = true;
    DType dtype = DType::Float32;
    Device* device = nullptr;
    Shape shape;  // only when it differs from the output's
  };
  OpId op_;
  const GradRule* rule_;
  OpArgs args_;
  size_t n_;
  std::array<Slot, kMaxRuleInputs> slots_;
  SavedTensor saved_out_;
};

class FnNode final : public Node {
 public:
  FnNode(const char* name, BackwardFn fn) : name_(name), fn_(std::move(fn)) {}
  std::string name() const override { return name_; }
  std::vector<TensorPtr> apply(const TensorPtr& grad) override {
    std::vector<TensorPtr> g = fn_(grad);
    g.resize(next.size());
    for (size_t i = 0; i < g.size(); ++i)
      if (!next[i].valid()) g[i] = nullptr;
    return g;
  }

 private:
  const char* name_;
  BackwardFn fn_;
};

class SavedFnNode final : public Node {
 public:
  SavedFnNode(const char* name, const std::vector<TensorPtr>& saved, SavedBackwardFn fn) : name_(name), fn_(std::move(fn)) {
    for (const TensorPtr& t : saved) saved_.emplace_back(t, false);
  }
  std::string name() const override { return name_; }
  std::vector<TensorPtr> apply(const TensorPtr& grad) override {
    std::vector<TensorPtr> vals;
    for (const SavedTensor& s : saved_) vals.push_back(s.unpack(*this));
    std::vector<bool> needs(next.size());
    for (size_t i = 0; i < next.size(); ++i) needs[i] = next[i].valid();
    std::vector<TensorPtr> g = fn_(grad, vals, needs);
    g.resize(next.size());
    for (size_t i = 0; i < g.size(); ++i)
      if (!next[i].valid()) g[i] = nullptr;
    return g;
  }
  void release_saved() override {
    for (SavedTensor& s : saved_) s.reset();
  }

 private:
  const char* name_;
  std::vector<SavedTensor> saved_;
  SavedBackwardFn fn_;
};

}  // namespace

void attach(const std::shared_ptr<Node>& node, const std::vector<TensorPtr>& inputs, const TensorPtr& out) {
  node->next.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] && is_floating(inputs[i]->dtype)) node->next[i] = gradient_edge(inputs[i]);
  set_history(out, node);
}

void record_saved_fn(const char* name, const std::vector<TensorPtr>& inputs, const TensorPtr& out,
                     const std::vector<TensorPtr>& saved, SavedBackwardFn backward) {
  if (!is_floating(out->dtype)) return;
  attach(std::make_shared<SavedFnNode>(name, saved, std::move(backward)), inputs, out);
}

void record_op(OpId op, const std::vector<Operand>& xs, const OpArgs& args, const TensorPtr& out) {
  if (!is_floating(out->dtype)) return;  // argmax, comparisons, integer results: not differentiable
  const GradRule* rule = op_row(op).grad;
  if (rule && rule->recorded_by_op) return;  // the op function records it (rules_nn.h)
  if (!rule)
    throw UnsupportedError(std::string("[") + op_row(op).name +
                           "] has no gradient rule; call it under bessemer.no_grad() or on tensors that do not "
                           "require grad");
  auto node = std::make_shared<OpNode>(op, rule, xs, args, out);
  set_history(out, node);
}

void record_fn(const char* name, const std::vector<TensorPtr>& inputs, const TensorPtr& out, BackwardFn backward) {
  if (!is_floating(out->dtype)) return;
  attach(std::make_shared<FnNode>(name, std::move(backward)), inputs, out);
}

TensorPtr sum_to(const TensorPtr& g, const Shape& shape) {
  if (g->shape == shape) return g;
  size_t lead = g->shape.size() - shape.size();
  Dims dims;
  for (size_t d = 0; d < g->shape.size(); ++d)
    if (d < lead || (shape[d - lead] == 1 && g->shape[d] != 1)) dims.push_back(int64_t(d));
  TensorPtr r = dims.empty() ? g : reduce(OpId::sum, g, dims, true);
  if (lead == 0 && r->shape == shape) return r;
  return reshape(r, Dims(shape.begin(), shape.end()));
}

}  // namespace bm
