"""layer_norm / batch_norm backward (_core._layer_norm_backward, _core._batch_norm_backward) against
torch autograd in float64 on every device, float dtype and layout: normalized_shape of 1 to 3
dims, weight and bias present or absent, batch_norm in training and evaluation, N = 1, zero-stride
grads; cpu vs metal-sim agreement; argument errors in the project's order."""

from __future__ import annotations

import numpy as np
import pytest
import torch.nn.functional as TF
from backward_helpers import (
    LAYOUTS,
    T,
    assert_grad_close,
    broadcast_grad,
    dtype_device_params,
    leaf,
    np64,
    place,
    randn,
)

import bessemer as bm
from bessemer import _core
from harness import DEVICES

SIM = "metal-sim"


def layer_norm_ref(x, ns, g, w=None, b=None, eps=1e-5):
    tx, tw, tb = leaf(x), None if w is None else leaf(w), None if b is None else leaf(b)
    TF.layer_norm(tx, ns, tw, tb, eps).backward(T(np.array(g)))
    return tx.grad, None if w is None else tw.grad, None if b is None else tb.grad


def check_grads(got, want, dtype, msg):
    for name, a, e in zip(("input", "weight", "bias"), got, want):
        if e is None:
            assert a is None, f"{msg}: unexpected grad_{name}"
        else:
            assert a is not None, f"{msg}: missing grad_{name}"
            assert_grad_close(a, e, dtype, f"{msg}: grad_{name}")


# ---- layer_norm ----

@pytest.mark.parametrize("device,dtype", dtype_device_params())
@pytest.mark.parametrize("shape,ns", [((2, 3, 4, 5), (5,)), ((2, 3, 4, 5), (4, 5)), ((2, 3, 4, 5), (3, 4, 5)),
                                      ((3, 40), (40,)), ((6,), (6,))],
                         ids=["last1", "last2", "last3", "long_row", "no_batch"])
@pytest.mark.parametrize("affine", ["none", "weight", "both", "bias"])
def test_layer_norm_backward_matches_torch(device, dtype, shape, ns, affine):
    x = randn(shape, dtype, 0, scale=2.0, shift=0.5)
    g = randn(shape, dtype, 1)
    w = randn(ns, dtype, 2, 0.5, 1.0) if affine in ("weight", "both") else None
    b = randn(ns, dtype, 3) if affine in ("bias", "both") else None
    got = _core._layer_norm_backward(place(g, dtype, device), place(x, dtype, device), list(ns),
                                     None if w is None else place(w, dtype, device),
                                     None if b is None else place(b, dtype, device))
    assert str(got[0].device) == device
    check_grads(got, layer_norm_ref(x, ns, g, w, b), dtype, f"{shape} {ns} {affine}")


@pytest.mark.parametrize("device,dtype", dtype_device_params())
@pytest.mark.parametrize("layout", LAYOUTS[1:])
@pytest.mark.parametrize("which", ["input", "grad", "both"])
def test_layer_norm_backward_strided(device, dtype, layout, which):
    """A transposed view is normalised along the dims it shows (issue 4's lesson), for the backward too."""
    shape, ns = (3, 4, 5), (4, 5)
    x = randn(shape, dtype, 4, scale=1.5)
    g = randn(shape, dtype, 5)
    w, b = randn(ns, dtype, 6, 0.5, 1.0), randn(ns, dtype, 7)
    lx = layout if which in ("input", "both") else "contiguous"
    lg = layout if which in ("grad", "both") else "contiguous"
    got = _core._layer_norm_backward(place(g, dtype, device, lg), place(x, dtype, device, lx), list(ns),
                                     place(w, dtype, device, layout), place(b, dtype, device, "offset"))
    check_grads(got, layer_norm_ref(x, ns, g, w, b), dtype, f"{layout} {which}")


@pytest.mark.parametrize("device,dtype", dtype_device_params())
@pytest.mark.parametrize("bkind", ["scalar", "row"])
def test_layer_norm_backward_zero_stride_grad(device, dtype, bkind):
    shape, ns = (4, 3, 8), (8,)
    x = randn(shape, dtype, 8)
    gt, g = broadcast_grad(shape, dtype, device, 9, bkind)
    w = randn(ns, dtype, 10, 0.5, 1.0)
    got = _core._layer_norm_backward(gt, place(x, dtype, device, "transposed"), list(ns), place(w, dtype, device),
                                     place(w, dtype, device))
    check_grads(got, layer_norm_ref(x, ns, g, w, w), dtype, bkind)


@pytest.mark.parametrize("device", DEVICES)
def test_layer_norm_backward_empty_and_eps(device):
    e = bm.zeros(0, 4, device=device)
    gi, gw, gb = _core._layer_norm_backward(e, e, [4], bm.ones(4, device=device), bm.ones(4, device=device))
    assert gi.shape == (0, 4) and gw.numpy().tolist() == [0] * 4 and gb.numpy().tolist() == [0] * 4
    # a constant row: var 0, the result is decided by eps
    x = np.full((2, 5), 3.0)
    g = randn((2, 5), bm.float32, 1)
    got = _core._layer_norm_backward(place(g, bm.float32, device), place(x, bm.float32, device), [5], eps=0.1)
    assert_grad_close(got[0], layer_norm_ref(x, (5,), g, eps=0.1)[0], bm.float32, "constant row")


@pytest.mark.parametrize("dtype", [bm.float32, bm.float16, bm.bfloat16])
@pytest.mark.parametrize("shape,ns", [((5, 7), (7,)), ((3, 2, 40), (2, 40))], ids=["thread", "group"])
def test_layer_norm_backward_cpu_and_simulator_agree(dtype, shape, ns):
    x, g = randn(shape, dtype, 20, 2.0, 1.0), randn(shape, dtype, 21)
    w, b = randn(ns, dtype, 22, 0.5, 1.0), randn(ns, dtype, 23)
    res = [[np64(t) for t in _core._layer_norm_backward(place(g, dtype, d, "transposed"), place(x, dtype, d), list(ns),
                                                        place(w, dtype, d), place(b, dtype, d))] for d in ("cpu", SIM)]
    tol = {bm.float32: 2e-6, bm.float16: 1e-3, bm.bfloat16: 8e-3}[dtype]
    for a, e in zip(res[1], res[0]):
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol)


# ---- batch_norm ----

def batch_norm_ref(x, g, w, rm, rv, training, eps=1e-5):
    c = x.shape[1]
    tx, tw = leaf(x), None if w is None else leaf(w)
    tb = leaf(np.zeros(c))
    trm = None if rm is None else T(rm)
    trv = None if rv is None else T(rv)
    TF.batch_norm(tx, trm, trv, tw, tb, training=training, eps=eps).backward(T(np.array(g)))
    return tx.grad, None if w is None else tw.grad, tb.grad


@pytest.mark.parametrize("device,dtype", dtype_device_params())
@pytest.mark.parametrize("shape", [(6, 3), (2, 3, 5), (2, 3, 4, 5), (1, 3, 2, 3)], ids=["2d", "3d", "4d", "n1"])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
def test_batch_norm_backward_matches_torch(device, dtype, shape, training, affine):
    c = shape[1]
    x = randn(shape, dtype, 0, scale=2.0, shift=1.5)
    g = randn(shape, dtype, 1)
    w = randn(c, dtype, 2, 0.5, 1.0) if affine else None
    rm, rv = randn(c, dtype, 3), np.abs(randn(c, dtype, 4)) + 0.5
    got = _core._batch_norm_backward(place(g, dtype, device), place(x, dtype, device),
                                     None if w is None else place(w, dtype, device), place(rm, dtype, device),
                                     place(rv, dtype, device), training)
    assert str(got[0].device) == device
    check_grads(got, batch_norm_ref(x, g, w, rm, rv, training), dtype, f"{shape} train={training} affine={affine}")


@pytest.mark.parametrize("device,dtype", dtype_device_params())
@pytest.mark.parametrize("layout", LAYOUTS[1:] + ["channels_last"])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_backward_strided(device, dtype, layout, training):
    shape = (2, 3, 4, 5)
    x = randn(shape, dtype, 5, scale=1.5, shift=-2.0)
    g = randn(shape, dtype, 6)
    w, rm, rv = randn(3, dtype, 7, 0.5, 1.0), randn(3, dtype, 8), np.abs(randn(3, dtype, 9)) + 0.5
    if layout == "channels_last":  # NHWC memory seen as NCHW
        xt = place(np.moveaxis(x, 1, -1), dtype, device).permute(0, 3, 1, 2)
        gt = place(np.moveaxis(g, 1, -1), dtype, device).permute(0, 3, 1, 2)
    else:
        xt, gt = place(x, dtype, device, layout), place(g, dtype, device, "offset" if layout != "offset" else "sliced")
    got = _core._batch_norm_backward(gt, xt, place(w, dtype, device, "sliced"), place(rm, dtype, device, "transposed"),
                                     place(rv, dtype, device), training)
    check_grads(got, batch_norm_ref(x, g, w, rm, rv, training), dtype, f"{layout} train={training}")


@pytest.mark.parametrize("device,dtype", dtype_device_params())
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_backward_zero_stride_grad(device, dtype, training):
    shape = (3, 2, 5)
    x = randn(shape, dtype, 10)
    gt, g = broadcast_grad(shape, dtype, device, 11, "scalar")
    rm, rv = randn(2, dtype, 12), np.abs(randn(2, dtype, 13)) + 0.5
    got = _core._batch_norm_backward(gt, place(x, dtype, device), None, place(rm, dtype, device),
                                     place(rv, dtype, device), training)
    check_grads(got, batch_norm_ref(x, g, None, rm, rv, training), dtype, f"scalar grad train={training}")


@pytest.mark.parametrize("device", DEVICES)
def test_batch_norm_backward_n1_and_empty(device):
    # (1, C) in evaluation; in training a single value per channel gives a zero grad_input
    x, g = randn((1, 4), bm.float32, 1), randn((1, 4), bm.float32, 2)
    rm, rv = randn(4, bm.float32, 3), np.abs(randn(4, bm.float32, 4)) + 0.5
    got = _core._batch_norm_backward(place(g, bm.float32, device), place(x, bm.float32, device), None,
                                     place(rm, bm.float32, device), place(rv, bm.float32, device), False)
    check_grads(got, batch_norm_ref(x, g, None, rm, rv, False), bm.float32, "(1, C) eval")
    gi, gw, gb = _core._batch_norm_backward(place(g, bm.float32, device), place(x, bm.float32, device),
                                            bm.ones(4, device=device), training=True)
    assert np64(gi).tolist() == [[0.0] * 4] and np.allclose(np64(gb), g[0]) and np.allclose(np64(gw), 0)
    e = bm.zeros(0, 3, 2, device=device)
    gi, gw, gb = _core._batch_norm_backward(e, e, bm.ones(3, device=device), training=True)
    assert gi.shape == (0, 3, 2) and np64(gw).tolist() == [0.0] * 3 and np64(gb).tolist() == [0.0] * 3


@pytest.mark.parametrize("dtype", [bm.float32, bm.float16, bm.bfloat16])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_backward_cpu_and_simulator_agree(dtype, training):
    shape = (3, 4, 3, 5)
    x, g = randn(shape, dtype, 30, 2.0, 1.0), randn(shape, dtype, 31)
    w, rm, rv = randn(4, dtype, 32, 0.5, 1.0), randn(4, dtype, 33), np.abs(randn(4, dtype, 34)) + 0.5
    res = [[np64(t) for t in _core._batch_norm_backward(place(g, dtype, d, "transposed"), place(x, dtype, d),
                                                        place(w, dtype, d), place(rm, dtype, d), place(rv, dtype, d),
                                                        training)] for d in ("cpu", SIM)]
    tol = {bm.float32: 2e-6, bm.float16: 1e-3, bm.bfloat16: 8e-3}[dtype]
    for a, e in zip(res[1], res[0]):
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol)


# ---- errors: devices first, then dtypes, then shapes ----

@pytest.mark.parametrize("device", DEVICES)
def test_norm_backward_errors(device):
    other = next(d for d in DEVICES if d != device)
    x = bm.ones(2, 3, device=device)
    with pytest.raises(bm.DeviceMismatchError, match=r"\[layer_norm_backward\] inputs are on different devices"):
        _core._layer_norm_backward(x, x, [3], bm.ones(3, dtype=bm.int32, device=other))
    with pytest.raises(bm.DeviceMismatchError, match=r"\[batch_norm_backward\] inputs are on different devices"):
        _core._batch_norm_backward(bm.ones(2, 4, device=other), x)
    with pytest.raises(bm.UnsupportedError, match=r"\[layer_norm_backward\] weight must be a floating point"):
        _core._layer_norm_backward(x, x, [4], bm.ones(3, dtype=bm.int32, device=device))
    with pytest.raises(bm.UnsupportedError, match=r"\[batch_norm_backward\] input must be a floating point"):
        _core._batch_norm_backward(x, bm.ones(2, 3, dtype=bm.int64, device=device))
    with pytest.raises(ValueError, match=r"\[layer_norm_backward\] grad_output has shape \(3, 2\) but input"):
        _core._layer_norm_backward(bm.ones(3, 2, device=device), x, [3])
    with pytest.raises(ValueError, match=r"\[layer_norm_backward\] normalized_shape \(2,\) does not match"):
        _core._layer_norm_backward(x, x, [2])
    with pytest.raises(ValueError, match=r"\[layer_norm_backward\] bias has shape \(2,\)"):
        _core._layer_norm_backward(x, x, [3], None, bm.ones(2, device=device))
    with pytest.raises(ValueError, match=r"\[batch_norm_backward\] weight should have shape \(3,\)"):
        _core._batch_norm_backward(x, x, bm.ones(2, device=device))
    with pytest.raises(ValueError, match=r"\[batch_norm_backward\] running_mean and running_var must be given"):
        _core._batch_norm_backward(x, x, training=False)
    with pytest.raises(ValueError, match=r"\[batch_norm_backward\] expected an input of shape \(N, C, \.\.\.\)"):
        _core._batch_norm_backward(bm.ones(3, device=device), bm.ones(3, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_norm_backward_many_unmergeable_dims(device):
    """10 dims whose strides merge nowhere (a reversed permutation): more than a shader's
    BM_MAX_DIMS per row and per element of a row, so the Metal host splits or copies."""
    shape = (2,) * 10
    perm = tuple(reversed(range(10)))
    x, g = randn(shape, bm.float32, 40), randn(shape, bm.float32, 41)
    w = randn(shape[1:], bm.float32, 42, 0.5, 1.0)

    def rev(v):  # v's values, in memory reversed-dim order
        return place(np.ascontiguousarray(np.transpose(v, perm)), bm.float32, device).permute(*perm)

    for ns in (shape[1:], shape[8:]):
        got = _core._layer_norm_backward(rev(g), rev(x), list(ns), place(w[(0,) * (9 - len(ns))], bm.float32, device))
        check_grads(got, layer_norm_ref(x, ns, g, w[(0,) * (9 - len(ns))]), bm.float32, f"ns={len(ns)} dims")
    got = _core._batch_norm_backward(rev(g), rev(x), None, training=True)
    check_grads(got, batch_norm_ref(x, g, None, None, None, True), bm.float32, "batch_norm")
