"""The test table: one row per op (tinygrad style). test_ops.py runs each row on every device,
layout and dtype through harness.check_op; test_coverage.py checks every registry op has a row.

Row fields: name, ours (bessemer fn), reference (numpy fn on float64/int64/bool arrays), number of
inputs, dtypes, input domain, and the expected output dtype rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import bessemer as bm
from harness import ALL_DTYPES, FLOATS, INTS


@dataclass
class Case:
    name: str  # registry op name this row covers
    ours: Callable
    reference: Callable
    nin: int = 1
    dtypes: list = field(default_factory=lambda: list(ALL_DTYPES))
    domain: str | tuple = "any"
    out: str = "same"  # same | bool | float (bool/int -> float32) | int64 | sum
    shape: tuple = (3, 4)
    shapes: tuple | None = None  # one shape per input, when the inputs differ (default: `shape` each)
    errors: dict = field(default_factory=dict)  # layout -> exception the op must raise on it
    variant: str = ""  # distinguishes several rows for one op
    tol: tuple | None = None  # (rtol, atol) overrides per-dtype defaults

    @property
    def id(self) -> str:
        return self.name + (f"[{self.variant}]" if self.variant else "")

    @property
    def input_shapes(self) -> list:
        return list(self.shapes) if self.shapes is not None else [self.shape] * self.nin


def expected_dtype(case: Case, dtype):
    if isinstance(case.out, bm.dtype):
        return case.out
    if case.out == "bool":
        return bm.bool
    if case.out == "int64":
        return bm.int64
    if case.out == "float":
        return dtype if dtype in FLOATS else bm.float32
    if case.out == "sum":
        return dtype if dtype in FLOATS else bm.int64
    return dtype


def f64(fn):
    """The reference computed in float64 (numpy would compute exp(bool) in float16)."""
    return lambda *xs: fn(*[np.asarray(x, dtype=np.float64) for x in xs])


CASES: list[Case] = [
    # ---- copies and casts ----
    Case("copy", lambda x: x.contiguous() if not x.is_contiguous() else x.clone(), lambda x: x, variant="clone"),
    *[Case("copy", (lambda d: lambda x: x.to(d))(d),
           (lambda d: lambda x: (x != 0) if d == bm.bool else np.trunc(x) if d in INTS else x)(d),
           variant=f"to_{d.name}", out=d) for d in ALL_DTYPES],
    Case("fill", lambda x: bm.full(x.shape, 2.5, dtype=x.dtype, device=x.device), lambda x: np.full(x.shape, 2.5),
         dtypes=list(FLOATS)),
    Case("fill", lambda x: bm.full(x.shape, 7, dtype=x.dtype, device=x.device), lambda x: np.full(x.shape, 7),
         dtypes=list(INTS), variant="int"),
    Case("arange", lambda x: bm.arange(3, 3 + x.numel(), dtype=x.dtype, device=x.device).reshape(x.shape),
         lambda x: np.arange(3, 3 + x.size).reshape(x.shape), dtypes=[d for d in ALL_DTYPES if d != bm.bool]),
    # ---- matmul: the "empty" layout zeroes every input's last dim, which leaves a valid K == 0
    # product only when the second input is 1-D; 0-d inputs are an error as in torch ----
    *[Case("matmul", lambda a, b: a @ b, np.matmul, nin=2, dtypes=list(FLOATS + INTS), shapes=shapes,
           variant=variant, errors={"0d": ValueError, **({} if ok_empty else {"empty": ValueError})})
      for variant, shapes, ok_empty in [
          ("2d", ((3, 4), (4, 5)), False),
          ("vec_mat", ((4,), (4, 5)), False),
          ("mat_vec", ((3, 4), (4,)), True),
          ("dot", ((4,), (4,)), True),
          ("batched", ((2, 1, 3, 4), (3, 4, 5)), False),
      ]],
    # ---- unary elementwise ----
    Case("neg", lambda x: -x, np.negative, dtypes=FLOATS + INTS),
    Case("neg", bm.neg, np.negative, dtypes=FLOATS + INTS, variant="fn"),
    Case("abs", abs, np.abs, dtypes=FLOATS + INTS),
    Case("relu", bm.relu, lambda x: np.maximum(x, 0), dtypes=FLOATS + INTS),
    Case("clamp", lambda x: bm.clamp(x, -1, 2), lambda x: np.clip(x, -1, 2), dtypes=FLOATS + INTS),
    Case("clamp", lambda x: x.clamp(min=0.5), lambda x: np.maximum(x, 0.5), dtypes=FLOATS, variant="min"),
    Case("clamp", lambda x: bm.clamp(x, max=1), lambda x: np.minimum(x, 1), dtypes=FLOATS + INTS, variant="max"),
    # bool/int inputs are computed in float32 (torch's int -> float promotion for these ops).
    Case("exp", bm.exp, f64(np.exp), out="float"),
    Case("log", bm.log, f64(np.log), domain="pos", out="float"),
    Case("sqrt", bm.sqrt, f64(np.sqrt), domain="pos", out="float"),
    Case("rsqrt", bm.rsqrt, f64(lambda x: 1 / np.sqrt(x)), domain="pos", out="float"),
    Case("sin", bm.sin, f64(np.sin), out="float"),
    Case("cos", bm.cos, f64(np.cos), out="float"),
    Case("tanh", bm.tanh, f64(np.tanh), out="float"),
    Case("sigmoid", bm.sigmoid, f64(lambda x: 1 / (1 + np.exp(-x))), out="float"),
    # ---- binary elementwise (same-dtype inputs; promotion is in test_elementwise.py) ----
    Case("add", lambda a, b: a + b, np.add, nin=2),  # bool: logical or
    Case("sub", lambda a, b: a - b, np.subtract, nin=2, dtypes=FLOATS + INTS),
    Case("mul", lambda a, b: a * b, np.multiply, nin=2),  # bool: logical and
    Case("div", lambda a, b: a / b, f64(np.true_divide), nin=2, out="float"),
    Case("pow", lambda a, b: a ** b, np.power, nin=2, dtypes=FLOATS + INTS, domain=("small", "exp"),
         variant="int_exp"),
    Case("pow", bm.pow, np.power, nin=2, dtypes=FLOATS, domain=("pos", "small"), variant="float_exp"),
    Case("maximum", bm.maximum, np.maximum, nin=2),
    Case("minimum", bm.minimum, np.minimum, nin=2),
    # Small-integer inputs ("exp" domain) so equal pairs occur.
    Case("eq", lambda a, b: a == b, np.equal, nin=2, domain="exp", out="bool"),
    Case("ne", lambda a, b: a != b, np.not_equal, nin=2, domain="exp", out="bool"),
    Case("lt", lambda a, b: a < b, np.less, nin=2, domain="exp", out="bool"),
    Case("le", lambda a, b: a <= b, np.less_equal, nin=2, domain="exp", out="bool"),
    Case("gt", bm.gt, np.greater, nin=2, domain="exp", out="bool"),
    Case("ge", bm.ge, np.greater_equal, nin=2, domain="exp", out="bool"),
    # where: the bool-dtype row passes the condition in the tested layout; the other row derives it.
    Case("where", bm.where, np.where, nin=3, dtypes=[bm.bool], variant="bool_cond"),
    Case("where", lambda x, a, b: bm.where(x > 0, a, b), lambda x, a, b: np.where(x > 0, a, b), nin=3),
    # ---- Python numbers on either side ----
    Case("add", lambda x: x + 2, lambda x: x + 2, dtypes=FLOATS + INTS, variant="scalar"),
    Case("sub", lambda x: 2 - x, lambda x: 2 - x, dtypes=FLOATS + INTS, variant="rscalar"),
    Case("mul", lambda x: 1.5 * x, lambda x: 1.5 * x, dtypes=FLOATS, variant="rscalar"),
    Case("div", lambda x: x / 3, f64(lambda x: x / 3), out="float", variant="scalar"),
    Case("pow", lambda x: x ** 2, lambda x: x ** 2, dtypes=FLOATS + INTS, variant="square"),
    Case("pow", lambda x: 2 ** x, lambda x: 2.0 ** x, dtypes=FLOATS + INTS, domain="exp", variant="rscalar"),
    Case("maximum", lambda x: bm.maximum(x, 0.5), lambda x: np.maximum(x, 0.5), dtypes=FLOATS, variant="scalar"),
    Case("lt", lambda x: x < 1, lambda x: x < 1, domain="exp", out="bool", variant="scalar"),
    Case("where", lambda x: bm.where(x > 0, x, 0), lambda x: np.where(x > 0, x, 0), dtypes=FLOATS + INTS,
         variant="scalar"),
]
