"""Every differentiable registry row has a gradient rule (csrc/autograd/rules_table.cpp, rules_nn.cpp)
and a gradient test row (tests/grad_cases.py, or a test file of its own for the nn ops)."""

from __future__ import annotations

import bessemer as bm
from grad_cases import CASES, NN_GRAD_ROWS

# Registry rows without a gradient: no float output, or no tensor inputs, or index outputs.
NOT_DIFFERENTIABLE = {"fill", "arange", "eq", "ne", "lt", "le", "gt", "ge", "argmax", "argmin", "uniform", "normal",
                      "max_pool2d_with_indices", "nonzero", "any", "all", "index_copy", "sgd_step", "adam_step",
                      "argsort", "randint",
                      # issue 12's elementwise math: bool or integer outputs
                      "isnan", "isinf", "isfinite", "logical_not", "logical_and", "logical_or", "logical_xor",
                      "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor"}


def test_every_differentiable_row_has_a_rule_and_a_test_row():
    tested = {c.op for c in CASES} | set(NN_GRAD_ROWS)
    problems = []
    for row in bm._core.op_table():
        name = row["name"]
        if name in NOT_DIFFERENTIABLE or "_backward" in name:
            continue
        if row["grad"] is None:
            problems.append(f"{name}: no gradient rule")
        elif name not in tested:
            problems.append(f"{name}: rule {row['grad']} has no gradient test row")
    assert not problems, "\n".join(problems)
