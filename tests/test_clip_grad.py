"""bessemer.nn.utils.clip_grad_norm_ / clip_grad_value_ against torch.nn.utils, on every device,
and without reading anything back to the host."""

import math

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer import _core
from harness import DEVICES

SHAPES = [(4, 3), (5,), (), (2, 3, 2)]


def make(device, scale, dtype=bm.float32, seed=0, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    ps, tps = [], []
    for s in shapes:
        w = rng.standard_normal(s).astype(np.float32)
        g = (rng.standard_normal(s) * scale).astype(np.float32)
        p = bm.nn.Parameter(bm.tensor(w, device=device).to(dtype))
        p.grad = bm.tensor(g, device=device).to(dtype)
        tdt = {bm.float32: torch.float32, bm.float16: torch.float16, bm.bfloat16: torch.bfloat16,
               bm.float64: torch.float64}[dtype]
        tp = torch.nn.Parameter(torch.tensor(w).to(tdt))
        tp.grad = torch.tensor(g).to(tdt)
        ps.append(p)
        tps.append(tp)
    return ps, tps


def as_np(t):
    return (t if t.dtype in (bm.float32, bm.float64) else t.to(bm.float32)).numpy().astype(np.float64)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0, -math.inf, 0.0])
@pytest.mark.parametrize("scale", [0.1, 10.0])  # below and above max_norm
def test_clip_grad_norm_matches_torch(device, norm_type, scale):
    ps, tps = make(device, scale)
    total = bm.nn.utils.clip_grad_norm_(ps, max_norm=1.5, norm_type=norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(tps, max_norm=1.5, norm_type=norm_type, foreach=False)
    assert isinstance(total, bm.Tensor) and total.ndim == 0 and str(total.device) == device
    np.testing.assert_allclose(total.item(), ttotal.item(), rtol=1e-5)
    for p, tp in zip(ps, tps):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [bm.float16, bm.bfloat16, bm.float64])
def test_clip_grad_norm_other_dtypes(device, dtype):
    if dtype == bm.float64 and device != "cpu":
        return  # float64 exists on the cpu only
    ps, tps = make(device, 10.0, dtype)
    total = bm.nn.utils.clip_grad_norm_(ps, max_norm=2.0)
    ttotal = torch.nn.utils.clip_grad_norm_(tps, max_norm=2.0, foreach=False)
    assert total.dtype == dtype
    tol = {bm.float16: 2e-3, bm.bfloat16: 2e-2, bm.float64: 1e-12}[dtype]
    np.testing.assert_allclose(as_np(total), ttotal.double().item(), rtol=tol)
    for p, tp in zip(ps, tps):
        np.testing.assert_allclose(as_np(p.grad), tp.grad.double().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
def test_clip_grad_value_matches_torch(device):
    ps, tps = make(device, 3.0)
    assert bm.nn.utils.clip_grad_value_(ps, clip_value=1.25) is None
    torch.nn.utils.clip_grad_value_(tps, clip_value=1.25, foreach=False)
    for p, tp in zip(ps, tps):
        np.testing.assert_array_equal(p.grad.numpy(), tp.grad.numpy())


def test_single_tensor_params_without_grads_and_empty():
    p = bm.nn.Parameter(bm.tensor([3.0, 4.0]))
    p.grad = bm.tensor([3.0, 4.0])
    assert bm.nn.utils.clip_grad_norm_(p, 1.0).item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-6)
    q = bm.nn.Parameter(bm.ones(2))  # no gradient: skipped
    total = bm.nn.utils.clip_grad_norm_([q], 1.0)
    assert total.item() == 0.0 and total.dtype == bm.float32
    with pytest.warns(UserWarning, match="empty generator"):
        bm.nn.utils.clip_grad_norm_((x for x in []), 1.0)


def test_error_if_nonfinite():
    p = bm.nn.Parameter(bm.ones(2))
    p.grad = bm.tensor([1.0, float("inf")])
    with pytest.raises(RuntimeError, match="non-finite"):
        bm.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    total = bm.nn.utils.clip_grad_norm_([p], 1.0)  # scales by the non-finite norm, as torch
    assert math.isinf(total.item())


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "cpu"])
def test_no_host_wait(device):
    ps, _ = make(device, 10.0)
    bm.synchronize(device)
    _core.reset_queue_stats(device)
    total = bm.nn.utils.clip_grad_norm_(ps, 1.0)
    bm.nn.utils.clip_grad_value_(ps, 0.01)
    assert _core.queue_stats(device)["waits"] == 0
    assert total.item() > 1.0
