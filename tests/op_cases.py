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
]
