// Recording: how ops put nodes on the tape.
//
// Registry ops are recorded by the dispatcher (run_op) or, for ops that write a prepared output
// (the nn ops), by their op function calling record_op; the node runs the op's rule from the one
// table of rules (rules.h). View ops, cat, to(device) and the other ops outside the registry record
// a closure node with record_fn.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "autograd/node.h"
#include "core/dispatch.h"

namespace bm {

// True when grad mode is on and some tensor operand requires grad: the cheap test before recording.
inline bool should_record(const std::vector<Operand>& xs) {
  if (!grad_enabled()) return false;
  for (const Operand& x : xs)
    if (!x.is_scalar() && requires_grad(*x.t)) return true;
  return false;
}
inline bool should_record(std::initializer_list<const TensorPtr*> xs) {
  if (!grad_enabled()) return false;
  for (const TensorPtr* x : xs)
    if (*x && requires_grad(**x)) return true;
  return false;
}

// Puts a node for registry op `op` on `out` (args as normalised by the dispatcher). Integer and
// bool outputs are not differentiable and get no node. An op without a rule is an error.
void record_op(OpId op, const std::vector<Operand>& xs, const OpArgs& args, const TensorPtr& out);

// A closure node: `backward` maps the output's gradient to one gradient per input (null: none).
using BackwardFn = std::function<std::vector<TensorPtr>(const TensorPtr& grad)>;
void record_fn(const char* name, const std::vector<TensorPtr>& inputs, const TensorPtr& out, BackwardFn backward);

// Makes `node` the history of `out`, with an edge per input (the floating inputs that require grad;
// null entries and the others get none): how every closure node joins the graph, Python's
// autograd.Function among them.
void attach(const std::shared_ptr<Node>& node, const std::vector<TensorPtr>& inputs, const TensorPtr& out);

// A zero tensor of geom's shape with `g` written into the view view_fn(zeros): the backward of
// select and slice (recorded under create_graph: its own backward is view_fn).
TensorPtr view_scatter(const TensorPtr& g, const TensorGeometry& geom,
                       const std::function<TensorPtr(const TensorPtr&)>& view_fn);

// A closure node that also keeps tensors for backward (version-checked, freed after a backward
// without retain_graph): `backward` gets the output's gradient, the saved tensors (unpacked) and
// which inputs need a gradient.
using SavedBackwardFn = std::function<std::vector<TensorPtr>(const TensorPtr& grad, const std::vector<TensorPtr>& saved,
                                                             const std::vector<bool>& needs)>;
void record_saved_fn(const char* name, const std::vector<TensorPtr>& inputs, const TensorPtr& out,
                     const std::vector<TensorPtr>& saved, SavedBackwardFn backward);

// Sums a broadcast gradient down to `shape` (the shape of the input that was broadcast).
TensorPtr sum_to(const TensorPtr& g, const Shape& shape);

}  // namespace bm
