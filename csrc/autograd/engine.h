// The backward engine: runs a graph's nodes in dependency order, sums the gradients that reach each
// node, and accumulates into leaves' .grad (backward) or hands back the gradients of chosen inputs
// (autograd.grad).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "autograd/node.h"

namespace bm {

// The node that adds incoming gradients into a leaf's .grad.
std::shared_ptr<Node> make_accumulate_grad(const std::shared_ptr<AutogradMeta>& meta, const Tensor& leaf);

// Tensor.backward / autograd.backward. grads[i] may be null only for a one-element root (then 1).
// inputs: when non-empty, only these leaves accumulate.
void run_backward(const std::vector<TensorPtr>& roots, const std::vector<TensorPtr>& grads, bool retain_graph,
                  bool create_graph, const std::vector<TensorPtr>& inputs);

// autograd.grad: the gradients of `outputs` with respect to `inputs` (null where unused and
// allow_unused; an error otherwise). Leaves' .grad are left untouched.
std::vector<TensorPtr> run_grad(const std::vector<TensorPtr>& outputs, const std::vector<TensorPtr>& grad_outputs,
                                const std::vector<TensorPtr>& inputs, bool retain_graph, bool create_graph,
                                bool allow_unused);

// Registers a hook run after each accumulation into leaf `t`'s .grad; returns its id for removal.
uint64_t add_post_accumulate_hook(const TensorPtr& t, std::function<void()> hook);
void remove_post_accumulate_hook(const TensorPtr& t, uint64_t id);

// Runs `fn` once the backward pass now running in this thread has finished (after every .grad is
// written and every post-accumulate hook has run); callbacks queued by callbacks run too. An error
// outside a backward pass.
void queue_backward_callback(std::function<void()> fn);

// Makes `t` keep its gradient when it is a non-leaf (Tensor.retain_grad()).
void retain_grad(const TensorPtr& t);

}  // namespace bm
