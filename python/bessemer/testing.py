"""Numerical comparison helpers, with torch.testing's default tolerances per dtype."""

from __future__ import annotations

import numpy as np

from . import _core
from ._core import Tensor

_dt = _core.dtype

# (rtol, atol) as torch.testing.assert_close uses them.
DEFAULT_TOLERANCES = {
    _dt.float16: (1e-3, 1e-5),
    _dt.bfloat16: (1.6e-2, 1e-5),
    _dt.float32: (1.3e-6, 1e-5),
    _dt.float64: (1e-7, 1e-7),
    _dt.int8: (0.0, 0.0),
    _dt.uint8: (0.0, 0.0),
    _dt.int16: (0.0, 0.0),
    _dt.int32: (0.0, 0.0),
    _dt.int64: (0.0, 0.0),
    _dt.bool: (0.0, 0.0),
}


def to_numpy(x) -> np.ndarray:
    """Any tensor (any device, any dtype incl. bfloat16) or array-like as a numpy array."""
    if isinstance(x, Tensor):
        if x.dtype == _dt.bfloat16:
            x = x.to(_dt.float32)
        return np.array(x.numpy())
    return np.asarray(x)


def assert_close(actual, expected, rtol=None, atol=None, *, check_dtype: bool = True, equal_nan: bool = True,
                 msg: str | None = None) -> None:
    """Raise AssertionError unless |actual - expected| <= atol + rtol * |expected| elementwise."""
    if isinstance(actual, Tensor) and isinstance(expected, Tensor) and check_dtype and actual.dtype != expected.dtype:
        raise AssertionError(f"dtypes differ: {actual.dtype} vs {expected.dtype}")
    if (rtol is None) != (atol is None):
        raise ValueError("[assert_close] give both rtol and atol, or neither")
    if rtol is None:
        dt = actual.dtype if isinstance(actual, Tensor) else _dt.float32
        rtol, atol = DEFAULT_TOLERANCES.get(dt, (1.3e-6, 1e-5))
    a, e = to_numpy(actual), to_numpy(expected)
    if a.shape != e.shape:
        raise AssertionError(f"shapes differ: {a.shape} vs {e.shape}" + (f"\n{msg}" if msg else ""))
    if a.dtype == np.bool_ or e.dtype == np.bool_:
        bad = a != e
    else:
        a64, e64 = a.astype(np.float64), e.astype(np.float64)
        with np.errstate(invalid="ignore"):
            bad = ~(np.abs(a64 - e64) <= atol + rtol * np.abs(e64))
            both_nan = np.isnan(a64) & np.isnan(e64)
            same_inf = np.isinf(a64) & (a64 == e64)
        bad &= ~same_inf
        if equal_nan:
            bad &= ~both_nan
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(
            f"tensors are not close: {int(np.sum(bad))} of {bad.size} elements differ "
            f"(rtol={rtol}, atol={atol}); first at {idx}: actual {a[idx]!r}, expected {e[idx]!r}"
            + (f"\n{msg}" if msg else "")
        )
