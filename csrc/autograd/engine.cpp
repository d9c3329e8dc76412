#include "autograd/engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "core/errors.h"
#include "core/memory.h"
#include "core/ops.h"

namespace bm {

namespace {

// A gradient headed for `g`: same device and shape (else an error naming the node); cast to g's dtype.
TensorPtr conform(const TensorPtr& grad, const TensorGeometry& g, const std::string& who) {
  if (grad->device() != g.device)
    throw DeviceMismatchError("[backward] " + who + " produced a gradient on " + grad->device()->name +
                              " for a tensor on " + g.device->name);
  if (grad->shape != g.shape)
    throw ValueError("[backward] " + who + " produced a gradient of shape " + shape_str(grad->shape) +
                     " for a tensor of shape " + shape_str(g.shape));
  return grad->dtype == g.dtype ? grad : cast(grad, g.dtype);
}

// True when `g` is the only holder of its memory (a view counts its own base, which dies with it)
// and lies in it densely from the start: .grad may then take it without a copy.
bool stealable(const TensorPtr& g) {
  if (g.use_count() != 1 || g->autograd || g->offset != 0 || !g->is_contiguous()) return false;
  if (size_t(g->numel()) * itemsize(g->dtype) != g->storage->nbytes) return false;
  long holders = g->storage.use_count();
  if (g->view_base && g->view_base.use_count() == 1 && g->view_base->storage == g->storage) --holders;
  return holders == 1;
}

class AccumulateGrad final : public Node {
 public:
  AccumulateGrad(std::shared_ptr<AutogradMeta> meta, const Tensor& leaf) : meta_(std::move(meta)) {
    out = {leaf.shape, leaf.dtype, leaf.device()};
  }
  std::string name() const override { return "AccumulateGrad"; }
  bool is_accumulate() const override { return true; }
  std::vector<TensorPtr> apply(const TensorPtr& grad) override {
    accumulate(*meta_, grad);
    run_hooks(*meta_);
    return {};
  }
  // The leaf's post-accumulate hooks, outside the lock (a hook reads .grad, or removes itself).
  static void run_hooks(AutogradMeta& meta) {
    std::vector<std::pair<uint64_t, std::function<void()>>> hooks;
    {
      std::lock_guard<std::mutex> lk(meta.grad_mutex);
      hooks = meta.post_accumulate_hooks;
    }
    for (auto& h : hooks) h.second();
  }
  // Also used for retain_grad on non-leaves. Under the meta's lock: backward() in several threads
  // may accumulate into one parameter at once. The replaced .grad is dropped after the lock.
  static void accumulate(AutogradMeta& meta, const TensorPtr& grad) {
    TensorPtr old;
    std::lock_guard<std::mutex> lk(meta.grad_mutex);
    accumulate_locked(meta.grad, grad, old);
  }

 private:
  static void accumulate_locked(TensorPtr& slot, const TensorPtr& grad, TensorPtr& old) {
    if (!slot) {
      // A fresh tensor of its own: the incoming gradient may be shared with other nodes (add passes
      // one tensor to both inputs) or be a zero-stride view.
      if (grad_enabled()) {
        slot = grad;
      } else if (stealable(grad)) {
        slot = detach(grad);  // nobody else holds its memory: take it instead of copying
      } else {
        // A fresh, dense copy: optimizers' fused kernels then read .grad in the parameter's
        // (contiguous) order, as torch's gradient layout contract promises.
        TensorPtr g = detach(grad);
        slot = g->is_contiguous() ? clone(g) : contiguous(g);
      }
      return;
    }
    // create_graph: keep the sum differentiable; a read-only .grad (a user's read-only NumPy
    // array) is replaced by the sum, never written.
    if (grad_enabled() || requires_grad(slot) || slot->storage->readonly) {
      old = slot;
      slot = binary(OpId::add, Operand(slot), Operand(grad));
    } else {
      run_op_into(OpId::add, {slot, grad}, OpArgs{}, slot);
      slot->storage->version++;
    }
  }

  std::shared_ptr<AutogradMeta> meta_;
};

// BESSEMER_AUTOGRAD_PROFILE=1: time spent in each kind of node, printed to stderr at exit.
bool profile_enabled() {
  static const bool on = std::getenv("BESSEMER_AUTOGRAD_PROFILE") != nullptr;
  return on;
}
std::map<std::string, double>& profile_table() {
  static std::map<std::string, double> table;
  static const bool registered = [] {
    std::atexit([] {
      std::vector<std::pair<double, std::string>> rows;
      for (auto& [k, v] : profile_table()) rows.push_back({v, k});
      std::sort(rows.rbegin(), rows.rend());
      for (auto& [v, k] : rows) std::fprintf(stderr, "%-36s %10.1f ms\n", k.c_str(), v * 1e3);
    });
    return true;
  }();
  (void)registered;
  return table;
}

struct ReadyOrder {
  bool operator()(const Node* a, const Node* b) const { return a->seq < b->seq; }  // latest first
};

struct GraphTask {
  bool retain_graph = false, create_graph = false;
  bool accumulate = true;                                  // false: autograd.grad (capture only)
  std::unordered_map<Node*, int> deps;                     // incoming edges not yet delivered
  std::unordered_map<Node*, TensorPtr> buffers;            // summed gradient per node
  std::unordered_set<Node*> needed;                        // nodes whose execution matters
  std::unordered_map<Node*, std::vector<size_t>> captures;  // node -> indices of requested inputs
  std::vector<TensorPtr> captured;
  std::vector<std::shared_ptr<Node>> keep;  // nodes stay alive while the task runs
};

void add_into(TensorPtr& slot, const TensorPtr& g) {
  if (!slot) { slot = g; return; }
  slot = binary(OpId::add, Operand(slot), Operand(g));
}

// Counts dependencies over the graph reachable from the roots; marks the nodes that lead to a
// capture (autograd.grad) or to any leaf (backward).
void prepare(GraphTask& task, const std::vector<Node*>& roots) {
  std::vector<Node*> order;  // DFS post-order
  std::unordered_set<Node*> seen;
  std::vector<std::pair<Node*, size_t>> stack;
  for (Node* r : roots) {
    if (!seen.insert(r).second) continue;
    stack.push_back({r, 0});
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (i < n->next.size()) {
        Node* c = n->next[i++].fn.get();
        if (!c) continue;
        task.deps[c]++;
        if (seen.insert(c).second) stack.push_back({c, 0});
      } else {
        order.push_back(n);
        stack.pop_back();
      }
    }
  }
  // backward() into every leaf needs every node; with captures (autograd.grad, backward(inputs=))
  // only the captured nodes and those upstream of one. Post-order visits children first.
  for (Node* n : order) {
    bool need = task.accumulate || task.captures.count(n) > 0;
    for (size_t i = 0; !need && i < n->next.size(); ++i)
      need = n->next[i].fn && task.needed.count(n->next[i].fn.get()) > 0;
    if (need) task.needed.insert(n);
  }
}

void execute(GraphTask& task, const std::vector<Edge>& roots, const std::vector<TensorPtr>& root_grads) {
  std::vector<Node*> root_nodes;
  for (const Edge& e : roots) root_nodes.push_back(e.fn.get());
  prepare(task, root_nodes);
  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> ready;
  for (size_t i = 0; i < roots.size(); ++i) add_into(task.buffers[roots[i].fn.get()], root_grads[i]);
  std::unordered_set<Node*> queued;
  for (Node* r : root_nodes)
    if (task.deps[r] == 0 && queued.insert(r).second) ready.push(r);

  GradModeGuard mode(task.create_graph);
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    TensorPtr grad;
    if (auto it = task.buffers.find(n); it != task.buffers.end()) {
      grad = std::move(it->second);
      task.buffers.erase(it);
    }
    if (auto it = task.captures.find(n); it != task.captures.end() && grad)
      for (size_t k : it->second) task.captured[k] = grad;
    for (auto& w : n->retained)
      if (auto m = w.lock(); m && grad) AccumulateGrad::accumulate(*m, grad);

    std::vector<TensorPtr> in_grads;
    bool run = grad && task.needed.count(n) && (task.accumulate || !n->is_accumulate());
    if (run) {
      if (profile_enabled()) {
        synchronize(nullptr);
        auto t0 = std::chrono::steady_clock::now();
        in_grads = n->apply(grad);
        synchronize(nullptr);
        profile_table()[n->name()] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      } else {
        in_grads = n->apply(grad);
      }
      if (!task.retain_graph) n->release_saved();  // a second backward through it is then an error
    }
    for (size_t i = 0; i < n->next.size(); ++i) {
      Node* c = n->next[i].fn.get();
      if (!c) continue;
      if (i < in_grads.size() && in_grads[i] && task.needed.count(c))
        add_into(task.buffers[c], conform(in_grads[i], c->out, n->name()));
      if (--task.deps[c] == 0 && queued.insert(c).second) ready.push(c);
    }
  }
}

std::vector<TensorPtr> root_gradients(const std::vector<TensorPtr>& roots, const std::vector<TensorPtr>& grads,
                                      std::vector<Edge>* edges) {
  if (!grads.empty() && grads.size() != roots.size())
    throw ValueError("[backward] got " + std::to_string(grads.size()) + " gradients for " +
                     std::to_string(roots.size()) + " tensors");
  std::vector<TensorPtr> out;
  for (size_t i = 0; i < roots.size(); ++i) {
    const TensorPtr& r = roots[i];
    if (!requires_grad(r))
      throw Error("[backward] element " + std::to_string(i) +
                  " of tensors does not require grad and does not have a grad_fn");
    edges->push_back(gradient_edge(r));
    TensorPtr g = grads.empty() ? nullptr : grads[i];
    if (!g) {
      if (r->numel() != 1)
        throw Error("[backward] grad can be implicitly created only for scalar outputs (got a tensor of shape " +
                    shape_str(r->shape) + "); pass gradient= with the output's shape");
      g = full(r->shape, Scalar::from_int(1), r->dtype, r->device());
    } else {
      if (g->device() != r->device())
        throw DeviceMismatchError("[backward] the gradient is on " + g->device()->name + " but the tensor is on " +
                                  r->device()->name);
      if (g->shape != r->shape)
        throw ValueError("[backward] mismatch in shape: the gradient has shape " + shape_str(g->shape) +
                         " and the tensor has shape " + shape_str(r->shape));
      if (!is_floating(g->dtype))
        throw TypeError("[backward] the gradient must be a floating point tensor, got " +
                        std::string(dtype_name(g->dtype)));
      if (g->dtype != r->dtype) g = cast(g, r->dtype);
    }
    out.push_back(g);
  }
  return out;
}

}  // namespace

std::shared_ptr<Node> make_accumulate_grad(const std::shared_ptr<AutogradMeta>& meta, const Tensor& leaf) {
  return std::make_shared<AccumulateGrad>(meta, leaf);
}

void retain_grad(const TensorPtr& t) {
  if (!requires_grad(t)) throw Error("[retain_grad] can't retain_grad on a tensor that has requires_grad=False");
  if (is_leaf(*t)) return;
  AutogradMeta& m = *t->autograd;
  if (m.retains_grad) return;
  m.retains_grad = true;
  m.grad_fn->retained.push_back(t->autograd);
}

namespace {
// The callbacks of the backward pass running in this thread (null outside one).
thread_local std::vector<std::function<void()>>* t_callbacks = nullptr;

struct CallbackScope {
  std::vector<std::function<void()>> list;
  std::vector<std::function<void()>>* prev;
  CallbackScope() : prev(t_callbacks) { t_callbacks = &list; }
  ~CallbackScope() { t_callbacks = prev; }
  // In queue order; a callback may queue more. The list is moved out first, so the next pass sees
  // only what this one queued.
  void run() {
    while (!list.empty()) {
      std::vector<std::function<void()>> now = std::move(list);
      list.clear();
      for (auto& f : now) f();
    }
  }
};
}  // namespace

uint64_t add_post_accumulate_hook(const TensorPtr& t, std::function<void()> hook) {
  if (!requires_grad(t) || !is_leaf(*t))
    throw Error(std::string("[register_post_accumulate_grad_hook] ") +
                (requires_grad(t) ? "post accumulate grad hooks cannot be registered on non-leaf tensors"
                                  : "cannot register a hook on a tensor that doesn't require gradient"));
  static std::atomic<uint64_t> next{1};
  const uint64_t id = next++;
  AutogradMeta& m = autograd_meta(*t);
  std::lock_guard<std::mutex> lk(m.grad_mutex);
  m.post_accumulate_hooks.push_back({id, std::move(hook)});
  return id;
}

void remove_post_accumulate_hook(const TensorPtr& t, uint64_t id) {
  if (!t->autograd) return;
  std::function<void()> dropped;  // destroyed after the lock: it may hold a Python object
  {
    std::lock_guard<std::mutex> lk(t->autograd->grad_mutex);
    auto& v = t->autograd->post_accumulate_hooks;
    for (auto it = v.begin(); it != v.end(); ++it)
      if (it->first == id) {
        dropped = std::move(it->second);
        v.erase(it);
        break;
      }
  }
}

void queue_backward_callback(std::function<void()> fn) {
  if (!t_callbacks) throw Error("[queue_callback] can only be called while a backward pass is running");
  t_callbacks->push_back(std::move(fn));
}

void run_backward(const std::vector<TensorPtr>& roots, const std::vector<TensorPtr>& grads, bool retain_graph,
                  bool create_graph, const std::vector<TensorPtr>& inputs) {
  OpScope scope("backward");  // OutOfMemoryError names the call the user made
  CallbackScope callbacks;
  std::vector<Edge> edges;
  std::vector<TensorPtr> g = root_gradients(roots, grads, &edges);
  GraphTask task;
  task.retain_graph = retain_graph;
  task.create_graph = create_graph;
  if (!inputs.empty()) {
    task.accumulate = false;
    task.captured.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!requires_grad(inputs[i])) throw Error("[backward] an input does not require grad");
      Edge e = gradient_edge(inputs[i]);
      task.keep.push_back(e.fn);
      task.captures[e.fn.get()].push_back(i);
    }
  }
  execute(task, edges, g);
  if (!inputs.empty()) {
    GradModeGuard mode(create_graph);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (task.captured[i]) {
        AutogradMeta& m = autograd_meta(*inputs[i]);
        AccumulateGrad::accumulate(m, task.captured[i]);
        if (is_leaf(*inputs[i])) AccumulateGrad::run_hooks(m);
      }
  }
  callbacks.run();
}

std::vector<TensorPtr> run_grad(const std::vector<TensorPtr>& outputs, const std::vector<TensorPtr>& grad_outputs,
                                const std::vector<TensorPtr>& inputs, bool retain_graph, bool create_graph,
                                bool allow_unused) {
  CallbackScope callbacks;
  std::vector<Edge> edges;
  std::vector<TensorPtr> g = root_gradients(outputs, grad_outputs, &edges);
  GraphTask task;
  task.retain_graph = retain_graph;
  task.create_graph = create_graph;
  task.accumulate = false;
  task.captured.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!requires_grad(inputs[i]))
      throw Error("[grad] input " + std::to_string(i) + " does not require grad");
    Edge e = gradient_edge(inputs[i]);
    task.keep.push_back(e.fn);
    task.captures[e.fn.get()].push_back(i);
  }
  execute(task, edges, g);
  callbacks.run();
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!task.captured[i] && !allow_unused)
      throw Error("[grad] input " + std::to_string(i) +
                  " was not used in the graph of the outputs; pass allow_unused=True to get None for it");
  return task.captured;
}

}  // namespace bm
