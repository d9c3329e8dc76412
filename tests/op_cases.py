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
    variant: str = ""  # distinguishes several rows for one op
    tol: tuple | None = None  # (rtol, atol) overrides per-dtype defaults

    @property
    def id(self) -> str:
        return self.name + (f"[{self.variant}]" if self.variant else "")


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
]
