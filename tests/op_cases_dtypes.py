"""Test-table rows for the dtypes issue part (op_cases.py imports them into CASES): the conversions to
the 8- and 16-bit integer dtypes, the *_like factories and randint (its reference: the NumPy Philox
of test_random.py, an implementation independent of the kernels'). The integer dtypes themselves
run through every other row via harness.INTS."""

from __future__ import annotations

import numpy as np

import bessemer as bm
from bessemer import _core
from harness import ALL_DTYPES, FLOATS, INTS
from op_cases import Case  # op_cases is complete when it imports us

_RANDINT_SEED = 20261125
_RANDINT_LOW, _RANDINT_HIGH = 3, 100  # fits every integer dtype (uint8 and int8 included) and bfloat16 exactly


def _truncated(x):
    """float -> integer conversion as torch does it: toward zero (the harness wraps to the width)."""
    return np.trunc(np.asarray(x, dtype=np.float64)).astype(np.int64) if x.dtype.kind == "f" else x.astype(np.int64)


def _randint_into(x):
    """randint written into x's own memory layout (strided, offset, 0-d, empty), from a fresh generator."""
    g = bm.Generator(x.device).manual_seed(_RANDINT_SEED)
    return _core.randint_(x, _RANDINT_LOW, _RANDINT_HIGH, g._g)


def _randint_reference(x):
    from test_random import philox_numpy

    n = x.size
    words = philox_numpy(_RANDINT_SEED, np.arange((n + 3) // 4, dtype=np.uint64)).reshape(-1)[:n]
    vals = _RANDINT_LOW + words.astype(np.int64) % (_RANDINT_HIGH - _RANDINT_LOW)
    return vals.reshape(x.shape)


def dtypes_cases() -> list[Case]:
    cases = [
        # conversions: positive floats (float -> unsigned of a negative value is undefined in C, as in torch)
        Case("copy", lambda x: x.byte(), _truncated, domain="pos", out=bm.uint8, variant="byte"),
        Case("copy", lambda x: x.char(), _truncated, domain="pos", out=bm.int8, variant="char"),
        Case("copy", lambda x: x.short(), _truncated, domain="pos", out=bm.int16, variant="short"),
        # integers of every width to the small ones wrap (int32 -5 -> uint8 251), as torch's casts
        Case("copy", lambda x: x.byte(), lambda x: x.astype(np.int64), dtypes=list(INTS), out=bm.uint8,
             variant="int_to_byte_wraps"),
        Case("copy", lambda x: x.type(bm.int8), lambda x: x.astype(np.int64), dtypes=list(INTS), out=bm.int8,
             variant="type_int8"),
        # the *_like factories keep the input's dtype (and device)
        Case("fill", lambda x: bm.zeros_like(x), np.zeros_like, variant="zeros_like"),
        Case("fill", lambda x: bm.ones_like(x), np.ones_like, variant="ones_like"),
        Case("fill", lambda x: bm.full_like(x, 7), lambda x: np.full_like(x, 7), variant="full_like"),
        Case("fill", lambda x: bm.zeros_like(x, dtype=bm.uint8), lambda x: np.zeros(x.shape), out=bm.uint8,
             variant="zeros_like_dtype"),
        # randint into any layout: a zero-stride output is refused, as every in-place write
        Case("randint", _randint_into, _randint_reference, dtypes=list(INTS) + list(FLOATS),
             errors={"broadcast": ValueError}),
    ]
    assert all(set(c.dtypes) <= set(ALL_DTYPES) for c in cases)
    return cases
