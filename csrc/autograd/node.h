// Autograd's data: per-tensor state, graph nodes and edges, saved tensors, grad mode.
//
// A tensor that requires grad carries an AutogradMeta. A leaf (made by the user) has requires_grad
// and accumulates into .grad through an AccumulateGrad node; a non-leaf has a grad_fn: the Node
// that produced it. A Node has one output and an Edge per input pointing at the node that will
// receive that input's gradient (an invalid edge: no gradient needed). The engine (engine.h) runs
// nodes in dependency order. Rules for registry ops live in rules*.cpp, one table.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/tensor.h"

namespace bm {

struct Node;

struct Edge {
  std::shared_ptr<Node> fn;
  bool valid() const { return bool(fn); }
};

struct AutogradMeta {
  bool requires_grad = false;  // a leaf's flag; a non-leaf requires grad because it has a grad_fn
  bool retains_grad = false;   // a non-leaf whose .grad is kept (retain_grad())
  TensorPtr grad;              // read and written under grad_mutex (grad_of / swap_grad)
  // The engine runs with the GIL released, so backward() in several Python threads at once
  // accumulates into a shared parameter's .grad concurrently, while Python may read .grad.
  std::mutex grad_mutex;
  std::shared_ptr<Node> grad_fn;
  std::weak_ptr<Node> grad_accumulator;  // a leaf's AccumulateGrad, shared by every edge into it
  // Called, in registration order, each time backward has added into this leaf's .grad
  // (Tensor.register_post_accumulate_grad_hook): DistributedDataParallel starts a bucket's
  // all-reduce from here. Read and written under grad_mutex; id -> hook.
  std::vector<std::pair<uint64_t, std::function<void()>>> post_accumulate_hooks;
};

// What the engine checks a gradient against: the shape, dtype and device of a node's output.
struct TensorGeometry {
  Shape shape;
  DType dtype = DType::Float32;
  Device* device = nullptr;
};

struct Node : std::enable_shared_from_this<Node> {
  std::vector<Edge> next;  // one per input
  TensorGeometry out;      // the output this node differentiates
  uint64_t seq = 0;        // creation order: a later node never feeds an earlier one
  std::vector<std::weak_ptr<AutogradMeta>> retained;  // outputs whose .grad is kept (retain_grad)

  Node();
  virtual ~Node() = default;
  virtual std::string name() const = 0;
  // Gradients of the inputs (null where next[i] is invalid or the gradient is zero), given the
  // output's gradient.
  virtual std::vector<TensorPtr> apply(const TensorPtr& grad) = 0;
  virtual void release_saved() {}
  virtual bool is_accumulate() const { return false; }
};

// ---- per-tensor queries ----
inline bool requires_grad(const Tensor& t) {
  return t.autograd && (t.autograd->requires_grad || t.autograd->grad_fn);
}
inline bool requires_grad(const TensorPtr& t) { return t && requires_grad(*t); }
inline bool is_leaf(const Tensor& t) { return !t.autograd || !t.autograd->grad_fn; }
// .grad under its lock; null when there is none.
TensorPtr grad_of(const Tensor& t);
// Replaces .grad under its lock and returns the old value, which the caller drops after the lock
// is released (dropping a NumPy-backed tensor takes the GIL; doing so under the lock could
// deadlock against a Python thread waiting for the lock while holding the GIL).
TensorPtr swap_grad(AutogradMeta& m, TensorPtr g);
AutogradMeta& autograd_meta(Tensor& t);  // creates it on first use

// The edge a gradient for `t` flows along: its grad_fn, or its leaf's AccumulateGrad (made once,
// shared). Invalid when t does not require grad.
Edge gradient_edge(const TensorPtr& t);
// Makes `node` the history of `t` (t becomes a non-leaf output of node).
void set_history(const TensorPtr& t, const std::shared_ptr<Node>& node);
// A new tensor sharing t's memory and layout, with no history (Tensor.detach()).
TensorPtr detach(const TensorPtr& t);

// ---- grad mode: per thread, as torch ----
bool grad_enabled();
void set_grad_enabled(bool on);
struct GradModeGuard {
  bool prev;
  explicit GradModeGuard(bool on) : prev(grad_enabled()) { set_grad_enabled(on); }
  ~GradModeGuard() { set_grad_enabled(prev); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;
};

// ---- saved tensors ----
// A tensor a rule needs in backward, with the storage version at save time: unpacking after an
// in-place write is an error naming the node. A saved input is kept as is (it cannot point back at
// this node, so no cycle); a saved output is kept as a detached alias, because the output's own
// grad_fn is this node. Unpacked while grad mode is on (create_graph), an output gets this node
// back as its history, so the rule's ops are recorded and can be differentiated again.
class SavedTensor {
 public:
  SavedTensor() = default;
  SavedTensor(const TensorPtr& t, bool is_output);
  bool defined() const { return bool(data_); }
  TensorPtr unpack(const Node& owner) const;
  void reset() { data_.reset(); }

 private:
  TensorPtr data_;
  uint64_t version_ = 0;
  bool is_output_ = false, was_defined_ = false;
};

}  // namespace bm
