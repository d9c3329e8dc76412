"""nll_loss backward (_core._nll_loss_backward) against torch autograd in float64 on every device
and float dtype: inputs (C,), (N, C), (N, C, d1), (N, C, d1, d2); with and without class weights;
ignore_index; the three reductions ('mean' divides by the total weight of the targets that are not
ignored); grads 0-d for mean/sum and target-shaped, in any layout, for 'none'."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from backward_helpers import T, assert_grad_close, broadcast_grad, dtype_device_params, leaf, np64, place, randn

import bessemer as bm
from bessemer import _core
from harness import DEVICES

SHAPES = [(5,), (4, 5), (3, 5, 4), (2, 5, 3, 2)]


def targets(shape, seed, ignore=None):
    """Class indices for an input of `shape`; with ignore, some targets set to it."""
    rng = np.random.default_rng(seed)
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = rng.integers(0, shape[0 if len(shape) == 1 else 1], tshape)
    if ignore is not None:
        t = np.where(rng.random(tshape) < 0.3, ignore, t)
        t.reshape(-1)[0] = ignore
    return t


def nll_ref(x, t, g, w, ignore, reduction):
    tx = leaf(x)
    loss = TF.nll_loss(tx, torch.tensor(t), None if w is None else T(w), ignore_index=ignore, reduction=reduction)
    loss.backward(T(np.array(g)))
    return tx.grad


def ours(device, dtype, x, t, g, w, ignore, reduction, g_layout="contiguous", t_layout="contiguous"):
    return _core._nll_loss_backward(g if isinstance(g, bm.Tensor) else place(np.asarray(g), dtype, device, g_layout),
                                    place(x, dtype, device), bm.tensor(np.array(t), device=device)
                                    if t_layout == "contiguous" else t_placed(t, device, t_layout),
                                    None if w is None else place(w, dtype, device, "sliced"), ignore, reduction)


def t_placed(t, device, layout):
    """An int64 target in a strided layout (transposed or step-sliced)."""
    if layout == "transposed":
        return bm.tensor(np.ascontiguousarray(t.T), device=device).transpose(0, 1)
    base = np.full(tuple(2 * s + 1 for s in t.shape), 10**6)
    idx = tuple(slice(1, None, 2) for _ in t.shape)
    base[idx] = t
    return bm.tensor(base, device=device)[idx]


@pytest.mark.parametrize("device,dtype", dtype_device_params())
@pytest.mark.parametrize("shape", SHAPES, ids=["c", "nc", "ncd", "ncdd"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("variant", ["plain", "weight", "ignore", "weight_ignore"])
def test_nll_loss_backward_matches_torch(device, dtype, shape, reduction, variant):
    c = shape[0 if len(shape) == 1 else 1]
    ignore = 2 if "ignore" in variant else -100
    x = randn(shape, dtype, 0)
    t = targets(shape, 1, ignore if "ignore" in variant and len(shape) > 1 else None)
    w = np.abs(randn(c, dtype, 2)) + 0.25 if "weight" in variant else None
    g = randn(t.shape if reduction == "none" else (), dtype, 3)
    got = ours(device, dtype, x, t, g, w, ignore, reduction)
    assert str(got.device) == device
    assert_grad_close(got, nll_ref(x, t, g, w, ignore, reduction), dtype, f"{shape} {reduction} {variant}")


@pytest.mark.parametrize("device,dtype", dtype_device_params())
@pytest.mark.parametrize("layout", ["transposed", "sliced", "offset", "broadcast"])
def test_nll_loss_backward_strided_grad_and_target(device, dtype, layout):
    """reduction='none': the grad (and the target) in any layout, a zero-stride grad included."""
    shape = (3, 4, 5)
    x, t, w = randn(shape, dtype, 4), targets(shape, 5, 1), np.abs(randn(4, dtype, 6)) + 0.5
    if layout == "broadcast":
        gt, g = broadcast_grad(t.shape, dtype, device, 7, "row")
    else:
        g = randn(t.shape, dtype, 7)
        gt = place(g, dtype, device, layout)
    t_layout = layout if layout in ("transposed", "sliced") else "contiguous"
    got = ours(device, dtype, x, t, gt, w, 1, "none", t_layout=t_layout)
    assert_grad_close(got, nll_ref(x, t, g, w, 1, "none"), dtype, layout)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("variant", ["plain", "weight"])
def test_nll_loss_backward_every_target_ignored(device, variant):
    """'mean' with nothing to average: torch's forward is NaN, its gradient all zeros."""
    x, t = randn((3, 4), bm.float32, 8), np.full(3, -100)
    w = np.ones(4) if variant == "weight" else None
    for reduction in ("mean", "sum", "none"):
        g = randn(() if reduction != "none" else (3,), bm.float32, 9)
        got = ours(device, bm.float32, x, t, g, w, -100, reduction)
        want = nll_ref(x, t, g, w, -100, reduction)
        assert np.array_equal(np64(got), want.numpy(), equal_nan=True), reduction


@pytest.mark.parametrize("device", DEVICES)
def test_nll_loss_backward_int32_target_and_empty(device):
    x, t, g = randn((4, 3), bm.float32, 10), targets((4, 3), 11), np.float64(1.5)
    got = _core._nll_loss_backward(place(g, bm.float32, device), place(x, bm.float32, device),
                                   bm.tensor(t.astype(np.int32), device=device), reduction="sum")
    assert_grad_close(got, nll_ref(x, t, g, None, -100, "sum"), bm.float32, "int32 targets")
    e = _core._nll_loss_backward(bm.tensor(1.0, device=device), bm.zeros(0, 3, device=device),
                                 bm.zeros(0, dtype=bm.int64, device=device), reduction="mean")
    assert e.shape == (0, 3)


@pytest.mark.parametrize("dtype", [bm.float32, bm.float16, bm.bfloat16])
@pytest.mark.parametrize("shape", [(6, 5), (2, 5, 3, 4)], ids=["classes_inner", "classes_outer"])
def test_nll_loss_backward_cpu_and_simulator_agree_bitwise(dtype, shape):
    """One product per element, the same on both: identical bits ('mean' also divides by the total
    weight, a sum whose order differs between the backends' reductions: an ulp of float32)."""
    x, t, w = randn(shape, dtype, 12), targets(shape, 13, 0), np.abs(randn(5, dtype, 14)) + 0.5
    for reduction in ("sum", "none", "mean"):
        g = randn(t.shape if reduction == "none" else (), dtype, 15)
        res = [np64(ours(d, dtype, x, t, g, w, 0, reduction)) for d in ("cpu", "metal-sim")]
        if reduction == "mean":
            np.testing.assert_allclose(res[1], res[0], rtol=2.5e-7 if dtype == bm.float32 else 1e-2, atol=0)
        else:
            np.testing.assert_array_equal(res[0], res[1])


@pytest.mark.parametrize("device", DEVICES)
def test_nll_loss_backward_errors(device):
    other = next(d for d in DEVICES if d != device)
    x, t = bm.ones(2, 3, device=device), bm.tensor([0, 1], device=device)
    g = bm.tensor(1.0, device=device)
    with pytest.raises(bm.DeviceMismatchError, match=r"\[nll_loss_backward\] inputs are on different devices"):
        _core._nll_loss_backward(g, x, bm.tensor([0, 1], device=other))
    with pytest.raises(bm.UnsupportedError, match=r"\[nll_loss_backward\] expected floating point"):
        _core._nll_loss_backward(g, bm.ones(2, 3, dtype=bm.int32, device=device), t)
    with pytest.raises(TypeError, match=r"\[nll_loss_backward\] expected a target of int64 class indices"):
        _core._nll_loss_backward(g, x, bm.ones(2, device=device))
    with pytest.raises(ValueError, match=r"\[nll_loss_backward\] 'avg' is not a valid value for reduction"):
        _core._nll_loss_backward(g, x, t, reduction="avg")
    with pytest.raises(ValueError, match=r"\[nll_loss_backward\] expected grad_output of shape \(2,\) for "
                                         r"reduction 'none', got \(\)"):
        _core._nll_loss_backward(g, x, t, reduction="none")
    with pytest.raises(ValueError, match=r"\[nll_loss_backward\] expected grad_output of shape \(\)"):
        _core._nll_loss_backward(bm.ones(2, device=device), x, t, reduction="sum")
    with pytest.raises(ValueError, match=r"\[nll_loss_backward\] weight must have one value per class"):
        _core._nll_loss_backward(g, x, t, bm.ones(2, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_nll_loss_backward_many_unmergeable_dims(device):
    """(N, C, d1..d8) with reversed strides: more position dims than a shader takes."""
    shape, perm = (2, 3) + (2,) * 8, tuple(reversed(range(10)))
    x, t = randn(shape, bm.float32, 20), targets(shape, 21, 1)
    g = randn(t.shape, bm.float32, 22)
    tperm = tuple(reversed(range(9)))
    gt = place(np.ascontiguousarray(np.transpose(g, tperm)), bm.float32, device).permute(*tperm)
    tt = bm.tensor(np.ascontiguousarray(np.transpose(t, tperm)), device=device).permute(*tperm)
    xt = place(np.ascontiguousarray(np.transpose(x, perm)), bm.float32, device).permute(*perm)
    got = _core._nll_loss_backward(gt, xt, tt, None, 1, "none")
    assert_grad_close(got, nll_ref(x, t, g, None, 1, "none"), bm.float32, "10 dims")
