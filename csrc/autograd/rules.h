// The gradient rules of registry ops: one table (rules_table.cpp), read like torch's
// derivatives.yaml. A rule maps the output's gradient to each input's gradient, composed of
// registry ops (so it runs on every backend and, under create_graph, is itself recorded).
#pragma once
#include <vector>

#include "autograd/node.h"
#include "core/dispatch.h"

namespace bm {

// What a rule sees. in(i): the input as an Operand (a Python number, or the saved tensor — null
// when the rule did not ask to save it). geom(i): every tensor input's shape/dtype/device.
struct GradCtx {
  OpId op;
  const OpArgs& args;
  std::vector<Operand> inputs;
  std::vector<TensorGeometry> geoms;
  std::vector<bool> needs;  // which inputs need a gradient
  TensorPtr out;            // the saved output (null unless saved)
  TensorPtr grad;           // the output's gradient
  const Operand& in(size_t i) const { return inputs[i]; }
  const TensorPtr& t(size_t i) const { return inputs[i].t; }
  bool need(size_t i) const { return i < needs.size() && needs[i]; }
};

// Returns one gradient per input (null: none). Gradients may have the output's broadcast shape and
// the compute dtype: the node sums them to each input's shape and casts to its dtype.
using GradRuleFn = std::vector<TensorPtr> (*)(const GradCtx&);

enum : unsigned { kSaveIn0 = 1, kSaveIn1 = 2, kSaveIn2 = 4, kSaveIn3 = 8, kSaveAllIn = 0xff };

struct GradRule {
  const char* node_name = nullptr;  // torch's grad_fn name, e.g. "AddBackward0"
  GradRuleFn fn = nullptr;
  unsigned save_inputs = 0;         // kSaveIn* bits
  bool save_output = false;
  // Recorded by the op function itself (nn ops whose backward needs the call's own arguments:
  // rules_nn.h), not by the dispatcher; `fn` is then null.
  bool recorded_by_op = false;
};

// The rule of `op`, or null when the op has none (non-differentiable, or not yet written). The
// dispatcher records rows with a rule function; rows recorded_by_op record themselves.
const GradRule* grad_rule(OpId op);

// Fills the nn ops' rows (rules_nn.cpp) into the table indexed by OpId.
void register_nn_rules(GradRule* table);
// Fills prod / cumsum / cumprod's rows (rules_reduce.cpp).
void register_reduce_rules(GradRule* table);
// Fills the elementwise math rows' rules (rules_elementwise.cpp) into the same table.
void register_elementwise_rules(GradRule* table);

}  // namespace bm
