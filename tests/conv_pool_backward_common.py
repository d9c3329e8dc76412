"""Shared by test_conv_backward.py and test_pool_backward.py: inputs in every layout, the tolerance
check and the error helper. Those files test the backward kernels of conv2d and the 2-D pools, and
max_pool2d(return_indices=True), against
torch's gradients (torch autograd on CPU in float64, on the same values), on every device and float
dtype, for many argument combinations and for strided layouts of grad_output and of the saved
tensors (transposed, channels-last, step-sliced, offset, zero-stride); argument errors in the
project's order (devices, then dtypes, then shapes)."""

from __future__ import annotations

import numpy as np
import pytest

import bessemer as bm
from bessemer.testing import assert_close
from harness import round_to

F = bm.nn.functional
FLOATS = [bm.float32, bm.float16, bm.bfloat16, bm.float64]
# (rtol, atol relative to the reference's largest magnitude)
TOL = {bm.float64: (1e-10, 1e-12), bm.float32: (2e-5, 1e-5), bm.float16: (2e-3, 2e-3),
       bm.bfloat16: (1.6e-2, 1.6e-2)}
LAYOUTS = ["contiguous", "transposed", "channels_last", "sliced", "offset", "batch_broadcast"]


def _storage(values, dtype):
    return values.astype(np.float16 if dtype == bm.float16 else np.float64 if dtype == bm.float64 else np.float32)


def make(values: np.ndarray, dtype, device: str, layout: str = "contiguous"):
    """A bessemer tensor holding `values` (representable in dtype) in the given memory layout.

    batch_broadcast expects values equal along dim 0 (see rand); it is a zero-stride view."""
    def build(base):
        return bm.tensor(_storage(base, dtype) if dtype is not None else base, dtype=dtype, device=device)

    nd = values.ndim
    if layout == "contiguous" or nd < 2:
        return build(values)
    if layout == "transposed":
        return build(np.ascontiguousarray(np.swapaxes(values, -1, -2))).transpose(-1, -2)
    if layout == "channels_last" and nd == 4:
        return build(np.ascontiguousarray(values.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
    if layout == "sliced":
        base = np.zeros(tuple(2 * s + 1 for s in values.shape), dtype=values.dtype)
        idx = tuple(slice(1, None, 2) for _ in values.shape)
        base[idx] = values
        return build(base)[idx]
    if layout == "offset":
        flat = np.concatenate([np.zeros(7, dtype=values.dtype), values.ravel()])
        return build(flat)[7:].reshape(*values.shape)
    if layout == "batch_broadcast":
        assert (values == values[:1]).all()
        return build(values[:1]).expand(*values.shape)
    return build(values)


def rand(shape, dtype, seed, layout="contiguous"):
    v = round_to(np.random.default_rng(seed).standard_normal(shape), dtype)
    if layout == "batch_broadcast":  # the same values for every image: a zero batch stride is possible
        v = np.broadcast_to(v[:1], v.shape).copy()
    return v


def check(actual, expected, dtype, device):
    assert actual.dtype == dtype and str(actual.device) == device
    assert tuple(actual.shape) == tuple(expected.shape), (actual.shape, expected.shape)
    rtol, atol = TOL[dtype]
    scale = max(1.0, float(np.abs(expected).max()) if expected.size else 1.0)
    assert_close(actual, expected, rtol, atol * scale, check_dtype=False)


def _raises(exc, op, fn):
    with pytest.raises(exc, match=rf"\[{op}\]"):
        fn()
