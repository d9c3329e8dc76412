"""Helpers for the backward-kernel tests (test_softmax_act_backward.py, test_norm_backward.py,
test_nll_backward.py): tensors holding given values in a chosen memory layout, and torch float64
references.

Values are always representable in the tensor's dtype (`rounded`), so torch can compute the
reference in float64 from exactly the numbers the kernel sees. Memory a view does not show is
filled with NaN: a kernel that reads outside its view produces NaN and fails the comparison.
"""

from __future__ import annotations

import numpy as np
import torch

import bessemer as bm
from harness import DEVICES, round_to

FLOAT_DTYPES = [bm.float32, bm.float16, bm.bfloat16, bm.float64]
# Layouts of one operand: dense, transposed (last two dims), step-sliced, at an offset.
LAYOUTS = ["contiguous", "transposed", "sliced", "offset"]
# (rtol, atol) of a backward result in `dtype` against the float64 reference on the same values.
GRAD_TOL = {bm.float64: (1e-10, 1e-12), bm.float32: (1e-5, 1e-6), bm.float16: (2e-3, 1e-3),
            bm.bfloat16: (1e-2, 8e-3)}


def dtype_device_params():
    return [(d, t) for d in DEVICES for t in FLOAT_DTYPES if t != bm.float64 or d == "cpu"]


def rounded(values, dtype) -> np.ndarray:
    return round_to(np.asarray(values, dtype=np.float64), dtype)


def randn(shape, dtype, seed, scale=1.0, shift=0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rounded(rng.standard_normal(shape) * scale + shift, dtype)


def _storage(values: np.ndarray, dtype) -> np.ndarray:
    if dtype == bm.bfloat16:
        return values.astype(np.float32)
    return values.astype({bm.float16: np.float16, bm.float32: np.float32, bm.float64: np.float64}[dtype])


def _dense(values: np.ndarray, dtype, device):
    return bm.tensor(_storage(values, dtype), dtype=dtype, device=device)


def place(values: np.ndarray, dtype, device, layout: str = "contiguous"):
    """A bessemer tensor holding `values` (exactly) with the given memory layout."""
    v = np.asarray(values, dtype=np.float64)
    if layout == "contiguous" or v.ndim == 0:
        return _dense(v, dtype, device)
    if layout == "transposed":
        if v.ndim == 1:  # every other element of a longer row
            base = np.full(2 * v.shape[0], np.nan)
            base[::2] = v
            return _dense(base, dtype, device)[::2]
        return _dense(np.ascontiguousarray(np.swapaxes(v, -1, -2)), dtype, device).transpose(-1, -2)
    if layout == "sliced":
        base = np.full(tuple(2 * s + 1 for s in v.shape), np.nan)
        idx = tuple(slice(1, None, 2) for _ in v.shape)
        base[idx] = v
        return _dense(base, dtype, device)[idx]
    if layout == "offset":
        flat = np.concatenate([np.full(5, np.nan), v.reshape(-1)])
        return _dense(flat, dtype, device)[5:].reshape(*v.shape)
    raise ValueError(layout)


def broadcast_grad(shape, dtype, device, seed, kind: str = "scalar"):
    """A zero-stride gradient and its values. scalar: one value expanded to every element (as the
    backward of a sum gives); row: a last-dim vector expanded along every other dim."""
    rng = np.random.default_rng(seed)
    if kind == "scalar":
        v = rounded(rng.standard_normal(()), dtype)
        return _dense(v, dtype, device).expand(*shape), np.broadcast_to(v, shape)
    base = rounded(rng.standard_normal((1,) * (len(shape) - 1) + tuple(shape[-1:])), dtype)
    return _dense(base, dtype, device).expand(*shape), np.broadcast_to(base, shape)


def T(a) -> torch.Tensor:
    """float64 torch tensor with a's values."""
    return torch.tensor(np.array(a, dtype=np.float64))


def leaf(a) -> torch.Tensor:
    return T(a).requires_grad_(True)


def np64(t) -> np.ndarray:
    return np.asarray(t.to(bm.float32).numpy() if t.dtype in (bm.float16, bm.bfloat16) else t.numpy(),
                      dtype=np.float64)


def assert_grad_close(actual, expected, dtype, msg=""):
    """actual (bessemer) against a float64 reference, within GRAD_TOL[dtype]."""
    rtol, atol = GRAD_TOL[dtype]
    exp = expected.detach().numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    assert tuple(actual.shape) == tuple(exp.shape), f"{msg}: shape {tuple(actual.shape)} vs {exp.shape}"
    assert actual.dtype == dtype, f"{msg}: dtype {actual.dtype}, expected {dtype}"
    np.testing.assert_allclose(np64(actual), exp, rtol=rtol, atol=atol, err_msg=msg)
