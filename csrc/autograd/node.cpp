#include "autograd/node.h"

#include <atomic>

#include "autograd/engine.h"
#include "core/errors.h"

namespace bm {

namespace {
std::atomic<uint64_t> g_next_seq{1};
thread_local bool t_grad_enabled = true;
}  // namespace

Node::Node() : seq(g_next_seq.fetch_add(1, std::memory_order_relaxed)) {}

bool grad_enabled() { return t_grad_enabled; }
void set_grad_enabled(bool on) { t_grad_enabled = on; }

AutogradMeta& autograd_meta(Tensor& t) {
  if (!t.autograd) t.autograd = std::make_shared<AutogradMeta>();
  return *t.autograd;
}

TensorPtr grad_of(const Tensor& t) {
  if (!t.autograd) return nullptr;
  std::lock_guard<std::mutex> lk(t.autograd->grad_mutex);
  return t.autograd->grad;
}

TensorPtr swap_grad(AutogradMeta& m, TensorPtr g) {
  std::lock_guard<std::mutex> lk(m.grad_mutex);
  std::swap(m.grad, g);
  return g;
}

Edge gradient_edge(const TensorPtr& t) {
  if (!requires_grad(t)) return {};
  AutogradMeta& m = *t->autograd;
  if (m.grad_fn) return {m.grad_fn};
  // One accumulator per leaf even when two threads record an edge into it at once (a forward in
  // one thread, a create_graph backward, which runs without the GIL, in another).
  static std::mutex accumulator_mutex;
  std::lock_guard<std::mutex> lk(accumulator_mutex);
  if (auto acc = m.grad_accumulator.lock()) return {acc};
  auto acc = make_accumulate_grad(t->autograd, *t);
  m.grad_accumulator = acc;
  return {acc};
}

void set_history(const TensorPtr& t, const std::shared_ptr<Node>& node) {
  AutogradMeta& m = autograd_meta(*t);
  m.grad_fn = node;
  m.requires_grad = false;  // a non-leaf requires grad through its grad_fn
  m.grad_accumulator.reset();
  node->out = {t->shape, t->dtype, t->device()};
}

TensorPtr detach(const TensorPtr& t) {
  auto v = std::make_shared<Tensor>();
  v->storage = t->storage;
  v->offset = t->offset;
  v->shape = t->shape;
  v->strides = t->strides;
  v->dtype = t->dtype;
  return v;
}

SavedTensor::SavedTensor(const TensorPtr& t, bool is_output) : is_output_(is_output), was_defined_(bool(t)) {
  if (!t) return;
  data_ = is_output ? detach(t) : t;
  version_ = t->storage->version;
}

TensorPtr SavedTensor::unpack(const Node& owner) const {
  if (!data_) {
    if (!was_defined_) return nullptr;
    throw Error("[backward] trying to backward through the graph a second time (or to use tensors saved by " +
                owner.name() +
                " after they were freed); pass retain_graph=True to the first backward() or autograd.grad()");
  }
  if (data_->storage->version != version_)
    throw Error("[backward] one of the tensors needed for gradient computation has been modified by an "
                "in-place operation: the " + std::string(is_output_ ? "output" : "input") + " of shape " +
                shape_str(data_->shape) + " saved by " + owner.name() + " is at version " +
                std::to_string(data_->storage->version) + "; expected version " + std::to_string(version_) +
                ". Use the out-of-place op (e.g. x = x + 1 instead of x += 1), or clone() before modifying");
  if (!is_output_ || !grad_enabled()) return data_;
  // create_graph: the output gets its history back so the rule's ops are recorded.
  TensorPtr t = detach(data_);
  auto m = std::make_shared<AutogradMeta>();
  m->grad_fn = std::const_pointer_cast<Node>(owner.shared_from_this());
  t->autograd = m;
  return t;
}

}  // namespace bm
