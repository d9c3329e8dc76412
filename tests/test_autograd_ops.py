"""Gradients of every differentiable registry op, the same expression in two engines: bessemer on
every device, layout and float dtype against torch's float64 gradients of the same values."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer.testing import assert_close
from grad_cases import CASES
from harness import DEVICES, dtypes_on, make_input

GRAD_LAYOUTS = ["contiguous", "transposed", "sliced", "offset", "broadcast", "0d", "empty"]
GRAD_FLOATS = [bm.float32, bm.float16, bm.bfloat16, bm.float64]
# (rtol, atol) of a gradient computed in dtype against torch's float64 gradient of the same values.
GRAD_TOL = {bm.float64: (1e-9, 1e-10), bm.float32: (1e-4, 1e-5), bm.float16: (2e-2, 2e-2),
            bm.bfloat16: (1e-1, 1e-1)}
_NP = {bm.float32: np.float32, bm.float16: np.float16, bm.bfloat16: np.float32, bm.float64: np.float64}


def _inputs(case, dtype, device, layout):
    rng = np.random.default_rng(zlib.crc32(f"{case.id}/{layout}".encode()))
    doms = case.domain if isinstance(case.domain, tuple) else (case.domain,) * len(case.shapes)
    pairs = [make_input(s, dtype, device, layout, rng, d) for s, d in zip(case.shapes, doms)]
    ours = [p[0].requires_grad_() for p in pairs]
    refs = [torch.tensor(np.asarray(p[1], dtype=np.float64), requires_grad=True) for p in pairs]
    return ours, refs, rng


def _grad_like(y, dtype, device, rng):
    vals = rng.standard_normal(tuple(y.shape)).astype(np.float32).astype(_NP[dtype]).astype(np.float64)
    ours = bm.tensor(vals.astype(_NP[dtype]), dtype=dtype, device=device)
    return ours, torch.tensor(vals)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", GRAD_LAYOUTS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_gradient(case, layout, device):
    if case.layouts is not None and layout not in case.layouts:
        return
    for dtype in dtypes_on(device, GRAD_FLOATS):
        xs, ts, rng = _inputs(case, dtype, device, layout)
        y = case.ours(*xs)
        yt = case.ref(*ts)
        assert tuple(y.shape) == tuple(yt.shape)
        g, gt = _grad_like(y, dtype, device, rng)
        y.backward(g)
        yt.backward(gt)
        rtol, atol = GRAD_TOL[dtype]
        for i, (x, t) in enumerate(zip(xs, ts)):
            if t.grad is None:  # torch: no gradient flows to this input (e.g. floor_divide)
                assert x.grad is None or not np.any(x.grad.to(bm.float32).numpy())
                continue
            assert x.grad is not None, f"input {i} got no gradient"
            assert x.grad.dtype == x.dtype and x.grad.device == x.device
            assert tuple(x.grad.shape) == tuple(x.shape)
            assert_close(x.grad, t.grad.numpy(), rtol, atol, check_dtype=False)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", [c for c in CASES if c.double_backward], ids=lambda c: c.id)
def test_second_derivative(case, device):
    """create_graph=True: the gradient's own gradient (a Hessian-vector product) against torch."""
    dtype = bm.float32
    xs, ts, rng = _inputs(case, dtype, device, "contiguous")
    y, yt = case.ours(*xs), case.ref(*ts)
    g, gt = _grad_like(y, dtype, device, rng)
    gs = bm.autograd.grad([y], xs, [g], create_graph=True)
    gts = torch.autograd.grad([yt], ts, [gt], create_graph=True)
    vs = [_grad_like(x, dtype, device, rng) for x in xs]
    total = sum((a * v[0]).sum() for a, v in zip(gs, vs) if a is not None and a.requires_grad)
    total_t = sum((a * v[1]).sum() for a, v in zip(gts, vs) if a.requires_grad)
    hts = (torch.autograd.grad([total_t], ts, allow_unused=True)
           if isinstance(total_t, torch.Tensor) and total_t.requires_grad else [None] * len(ts))
    hts = [None if h is None or h._is_zerotensor() else h for h in hts]
    if not (isinstance(total, bm.Tensor) and total.requires_grad):
        # our gradient does not depend on the inputs: torch's second derivative must vanish too
        assert all(h is None or not h.any() for h in hts)
        return
    hs = bm.autograd.grad([total], xs, allow_unused=True)
    for h, ht in zip(hs, hts):
        if ht is None:
            assert h is None or not np.any(h.numpy())
            continue
        assert h is not None
        assert_close(h, ht.numpy(), 1e-4, 1e-4, check_dtype=False)
