"""Test-table rows for issue 12's reduction part (op_cases.py imports them into CASES): the prod,
cumsum, cumprod and argsort rows, against torch (CPU, float64 / int64 / bool data). The
compositions built on them (std, logsumexp, norm, sort, topk, median, unique, isclose...) are
tested against torch in tests/test_reduce_ext.py."""

from __future__ import annotations

import numpy as np

import bessemer as bm
from harness import ALL_DTYPES
from op_cases import Case, _dims_id, _reduce_raises  # noqa: F401  (op_cases is complete when it imports us)


def _t(x):
    import torch
    return torch.from_numpy(np.array(x))  # (ascontiguousarray would make a 0-d array 1-D)


def _np(t):
    return t.numpy()


# prod takes every element (no keepdim, as torch) or one dim.
PROD_DIMS = [(None, (3, 4)), (0, (3, 4)), (-1, (3, 4)), (1, (3, 4, 5))]


def _prod_ref(dim, keep):
    def ref(x):
        t = _t(x)
        if dim is None:
            return _np(t.prod())
        return _np(t.prod(dim if x.ndim else 0, keepdim=keep))
    return ref


def _prod_rows():
    rows = []
    for dim, shape in PROD_DIMS:
        for keep in (False, True) if dim is not None else (False,):
            rows.append(Case("prod", (lambda d, k: lambda x: bm.prod(x, d, k))(dim, keep), _prod_ref(dim, keep),
                             dtypes=list(ALL_DTYPES), domain="small", out="sum", shape=shape,
                             variant=_dims_id(dim, keep), errors=_reduce_raises(dim, shape, False)))
    rows.append(Case("prod", lambda x: bm.prod(x, 0, dtype=bm.float32), lambda x: _np(_t(x).double().prod(0)),
                     dtypes=list(ALL_DTYPES), domain="small", out=bm.float32, variant="dtype_float32"))
    return rows


SCAN_DIMS = [(0, (3, 4, 5)), (1, (3, 4, 5)), (-1, (3, 4, 5))]


def _scan_rows(name):
    rows = []
    for dim, shape in SCAN_DIMS:
        ours = (lambda d: lambda x: getattr(bm, name)(x, d))(dim)
        ref = (lambda d: lambda x: _np(getattr(_t(x), name)(d if x.ndim else 0)))(dim)
        errors = {"0d": IndexError} if dim not in (0, -1) else {}
        rows.append(Case(name, ours, ref, dtypes=list(ALL_DTYPES), domain="small", out="sum", shape=shape,
                         variant=f"dim{dim}", errors=errors))
    rows.append(Case(name, lambda x: getattr(bm, name)(x, 0, dtype=bm.float32),
                     lambda x: _np(getattr(_t(x).double(), name)(0)), dtypes=list(ALL_DTYPES), domain="small",
                     out=bm.float32, variant="dtype_float32"))
    return rows


def _argsort_ref(dim, desc):
    return lambda x: _np(_t(x).argsort(dim=dim if x.ndim else 0, descending=desc, stable=True))


def _argsort_rows():
    rows = []
    for dim, shape in [(-1, (3, 7)), (0, (5, 4)), (1, (2, 6, 3))]:
        for desc in (False, True):
            errors = {"0d": IndexError} if dim not in (0, -1) else {}
            rows.append(Case(
                "argsort", (lambda d, s: lambda x: bm.argsort(x, d, s))(dim, desc),
                _argsort_ref(dim, desc),
                dtypes=list(ALL_DTYPES), out="int64", shape=shape, variant=f"dim{dim}" + ("_desc" if desc else ""),
                errors=errors))
    # values of small integers: many ties, whose order only a stable sort fixes
    rows.append(Case("argsort", lambda x: bm.argsort(x, 0, True), _argsort_ref(0, True),
                     dtypes=list(ALL_DTYPES), domain="exp", out="int64", shape=(9, 3), variant="ties"))
    # rows past the Metal rank sort's limit (256): the per-row merge sort, with ties, both orders
    for desc in (False, True):
        rows.append(Case("argsort", (lambda s: lambda x: bm.argsort(x, -1, s))(desc), _argsort_ref(-1, desc),
                         dtypes=list(ALL_DTYPES), domain="exp", out="int64", shape=(2, 300),
                         variant="long_rows" + ("_desc" if desc else "")))
    return rows


def reduce_cases() -> list[Case]:
    return [*_prod_rows(), *_scan_rows("cumsum"), *_scan_rows("cumprod"), *_argsort_rows()]
