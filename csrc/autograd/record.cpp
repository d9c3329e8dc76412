#include "autograd/record.h"

#include "autograd/rules.h"
#include "core/errors.h"
#include "core/ops.h"

namespace bm {

namespace {

// A registry op's node: runs the op's rule, then fits each gradient to its input.
class OpNode final : public Node {
 public:
  OpNode(OpId op, const GradRule* rule, const std::vector<Operand>& xs, const OpArgs& args, const TensorPtr& out)
      : op_(op), rule_(rule), args_(args) {
    size_t n = xs.size();
    scalars_.resize(n);
    is_scalar_.resize(n);
    saved_.resize(n);
    geoms_.resize(n);
    next.resize(n);
    for (size_t i = 0; i < n; ++i) {
      is_scalar_[i] = xs[i].is_scalar();
      if (is_scalar_[i]) { scalars_[i] = xs[i].s; continue; }
      const TensorPtr& t = xs[i].t;
      geoms_[i] = {t->shape, t->dtype, t->device()};
      next[i] = is_floating(t->dtype) ? gradient_edge(t) : Edge{};
      if (rule->save_inputs & (1u << i)) saved_[i] = SavedTensor(t, false);
    }
    if (rule->save_output) saved_out_ = SavedTensor(out, true);
  }
  std::string name() const override { return rule_->node_name; }
  void release_saved() override {
    for (auto& s : saved_) s.reset();
    saved_out_.reset();
  }
  std::vector<TensorPtr> apply(const TensorPtr& grad) override {
    GradCtx ctx{op_, args_, {}, geoms_, {}, saved_out_.unpack(*this), grad};
    size_t n = next.size();
    ctx.inputs.reserve(n);
    ctx.needs.resize(n);
    for (size_t i = 0; i < n; ++i) {
      ctx.needs[i] = next[i].valid();
      if (is_scalar_[i]) ctx.inputs.emplace_back(scalars_[i]);
      else ctx.inputs.emplace_back(saved_[i].unpack(*this));
    }
    std::vector<TensorPtr> g = rule_->fn(ctx);
    g.resize(n);
    for (size_t i = 0; i < n; ++i) {
      if (!next[i].valid() || !g[i]) { g[i] = nullptr; continue; }
      if (g[i]->shape != geoms_[i].shape) g[i] = sum_to(g[i], geoms_[i].shape);
      if (g[i]->dtype != geoms_[i].dtype) g[i] = cast(g[i], geoms_[i].dtype);
    }
    return g;
  }

 private:
  OpId op_;
  const GradRule* rule_;
  OpArgs args_;
  std::vector<Scalar> scalars_;
  std::vector<bool> is_scalar_;
  std::vector<SavedTensor> saved_;
  std::vector<TensorGeometry> geoms_;
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

}  // namespace

void record_op(OpId op, const std::vector<Operand>& xs, const OpArgs& args, const TensorPtr& out) {
  if (!is_floating(out->dtype)) return;  // argmax, comparisons, integer results: not differentiable
  const GradRule* rule = op_row(op).grad;
  if (!rule)
    throw UnsupportedError(std::string("[") + op_row(op).name +
                           "] has no gradient rule; call it under bessemer.no_grad() or on tensors that do not "
                           "require grad");
  auto node = std::make_shared<OpNode>(op, rule, xs, args, out);
  set_history(out, node);
}

void record_fn(const char* name, const std::vector<TensorPtr>& inputs, const TensorPtr& out, BackwardFn backward) {
  if (!is_floating(out->dtype)) return;
  auto node = std::make_shared<FnNode>(name, std::move(backward));
  node->next.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] && is_floating(inputs[i]->dtype)) node->next[i] = gradient_edge(inputs[i]);
  set_history(out, node);
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
