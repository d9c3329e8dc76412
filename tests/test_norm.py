"""Normalisation against torch CPU on every device.

batch_norm: training (outputs AND running statistics over several steps, updated in place on their
device), eval, with and without affine, (N, C) and (N, C, H, W), strided inputs and buffers.
layer_norm: over the last 1/2/3 dims on contiguous, transposed, permuted, step-sliced, offset and
broadcast inputs — issue 4's bug, LayerNorm after a transposed view, must never ship — and the
issue's chain (conv -> reshape -> transpose -> LayerNorm -> transpose -> reshape) and step-by-step
variance. Errors: devices first, then shapes. The layers are in test_norm_layers.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import bessemer as bm
from bessemer import nn
from bessemer.nn import functional as F
from bessemer.testing import assert_close, to_numpy
from harness import DEVICES

OTHER = {d: next(o for o in DEVICES if o != d) for d in DEVICES}  # a second device for mismatches
HALF_TOL = {bm.float16: (2e-3, 2e-3), bm.bfloat16: (1.6e-2, 1.6e-2)}


def rand(shape, seed=0, scale=1.0, shift=0.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale + shift).astype(np.float32)


def ours(a: np.ndarray, device: str, dtype=bm.float32):
    return bm.tensor(a, device=device).to(dtype)


def rounded(a: np.ndarray, dtype) -> np.ndarray:
    """a's values as `dtype` holds them, back in float32 (the oracle's input for half-type runs)."""
    return to_numpy(bm.tensor(a).to(dtype)).astype(np.float32)


def T(a) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a))


# ---- batch_norm ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 5, 6)], ids=["2d", "4d"])
@pytest.mark.parametrize("affine", [False, True], ids=["plain", "affine"])
def test_batch_norm_training_and_running_stats_match_torch(device, shape, affine):
    c = shape[1]
    rm, rv = bm.zeros(c, device=device), bm.ones(c, device=device)
    trm, trv = torch.zeros(c), torch.ones(c)
    w = b = tw = tb = None
    if affine:
        wv, bv = rand(c, 10, 0.5, 1.0), rand(c, 11)
        w, b, tw, tb = ours(wv, device), ours(bv, device), T(wv), T(bv)
    for step in range(4):
        x = rand(shape, step, scale=1 + step, shift=step - 1.5)
        m = (0.1, 0.3, 1.0, 0.0)[step]
        out = F.batch_norm(ours(x, device), rm, rv, w, b, training=True, momentum=m, eps=1e-5)
        want = TF.batch_norm(T(x), trm, trv, tw, tb, training=True, momentum=m, eps=1e-5)
        assert str(out.device) == device and str(rm.device) == device
        assert_close(out, want.numpy(), 1e-5, 1e-5, msg=f"output, step {step}")
        assert_close(rm, trm.numpy(), 1e-5, 1e-6, msg=f"running_mean, step {step}")
        assert_close(rv, trv.numpy(), 1e-5, 1e-6, msg=f"running_var (unbiased), step {step}")
    x = rand(shape, 9, 2.0, 0.5)
    out = F.batch_norm(ours(x, device), rm, rv, w, b, training=False)
    assert_close(out, TF.batch_norm(T(x), trm, trv, tw, tb, training=False).numpy(), 1e-5, 1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [bm.float16, bm.bfloat16])
def test_batch_norm_half_inputs_use_float32_statistics(device, dtype):
    """Half inputs with float32 running stats (mixed, as torch allows): statistics in float32."""
    x = rounded(rand((4, 3, 5, 5), 1, 3.0, 10.0), dtype)  # a large mean: float16 sums would lose it
    rm, rv = bm.zeros(3, device=device), bm.ones(3, device=device)
    trm, trv = torch.zeros(3), torch.ones(3)
    out = F.batch_norm(ours(x, device, dtype), rm, rv, training=True)
    want = TF.batch_norm(T(x), trm, trv, training=True)
    assert out.dtype == dtype and rm.dtype == bm.float32
    assert_close(out, want.numpy(), *HALF_TOL[dtype])
    assert_close(rm, trm.numpy(), 1e-5, 1e-5)
    assert_close(rv, trv.numpy(), 1e-5, 1e-5)
    out = F.batch_norm(ours(x, device, dtype), rm.to(dtype), rv.to(dtype), training=False)
    assert_close(out, TF.batch_norm(T(x), trm, trv, training=False).numpy(), *HALF_TOL[dtype])


def _channel_views(device):
    """(name, bessemer view, numpy values) of (N, C, H, W) inputs in unusual layouts."""
    base = rand((2, 5, 6, 3), 3, 2.0, 1.0)  # NHWC memory
    yield "channels_last", ours(base, device).permute(0, 3, 1, 2), base.transpose(0, 3, 1, 2)
    big = rand((5, 7, 9, 11), 4)
    yield "step_sliced", ours(big, device)[1::2, ::2, 2::3, ::4], big[1::2, ::2, 2::3, ::4]
    flat = rand(2 * 4 * 3 * 5 + 7, 5)
    yield "offset", ours(flat, device)[7:].reshape(2, 4, 3, 5), flat[7:].reshape(2, 4, 3, 5)
    row = rand((1, 3, 1, 5), 6)
    yield "broadcast", ours(row, device).expand(4, 3, 2, 5), np.broadcast_to(row, (4, 3, 2, 5))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("training", [False, True], ids=["eval", "train"])
def test_batch_norm_on_strided_inputs(device, training):
    for name, x, xv in _channel_views(device):
        c = xv.shape[1]
        mv, vv, wv, bv = rand(c, 1), rand(c, 2) ** 2 + 0.5, rand(c, 3), rand(c, 4)
        rm, rv = ours(mv, device), ours(vv, device)
        trm, trv = T(mv), T(vv)
        out = F.batch_norm(x, rm, rv, ours(wv, device), ours(bv, device), training=training)
        want = TF.batch_norm(T(xv), trm, trv, T(wv), T(bv), training=training)
        assert_close(out, want.numpy(), 1e-5, 1e-5, msg=name)
        assert_close(rm, trm.numpy(), 1e-5, 1e-6, msg=name)
        assert_close(rv, trv.numpy(), 1e-5, 1e-6, msg=name)


@pytest.mark.parametrize("device", DEVICES)
def test_batch_norm_updates_strided_running_stats_in_place(device):
    """Running stats that are views (every other element of a buffer) are updated where they live."""
    buf = bm.zeros(8, device=device)
    rm, rv = buf[0::2], buf[1::2]
    bm.nn.init.ones_(rv)
    x = rand((5, 4, 3), 7, 2.0, 1.0)
    trm, trv = torch.zeros(4), torch.ones(4)
    F.batch_norm(ours(x, device), rm, rv, training=True, momentum=0.25)
    TF.batch_norm(T(x), trm, trv, training=True, momentum=0.25)
    assert_close(buf[0::2], trm.numpy(), 1e-5, 1e-6)
    assert_close(buf[1::2], trv.numpy(), 1e-5, 1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_batch_norm_empty_batch_leaves_running_stats(device):
    rm, rv = bm.zeros(3, device=device), bm.ones(3, device=device)
    out = F.batch_norm(bm.zeros(0, 3, 2, device=device), rm, rv, training=True)
    assert tuple(out.shape) == (0, 3, 2)
    assert rm.tolist() == [0, 0, 0] and rv.tolist() == [1, 1, 1]


# ---- layer_norm ----

def _layer_norm_views(shape, device, seed, dtype=bm.float32):
    """(name, bessemer view, numpy values) of `shape` in every layout a kernel must handle."""
    nd = len(shape)
    a = rand(shape, seed)
    yield "contiguous", ours(a, device, dtype), a
    sw = shape[:-2] + (shape[-1], shape[-2])
    b = rand(sw, seed + 1)
    yield "transposed", ours(b, device, dtype).transpose(-1, -2), np.swapaxes(b, -1, -2)
    r = rand(shape[::-1], seed + 2)
    yield "permuted", ours(r, device, dtype).permute(*range(nd - 1, -1, -1)), r.transpose(*range(nd - 1, -1, -1))
    big = rand(tuple(3 * s + 2 for s in shape), seed + 3)
    idx = tuple(slice(2, None, 3) for _ in shape)
    yield "step_sliced", ours(big, device, dtype)[idx], big[idx]
    n = int(np.prod(shape))
    flat = rand(n + 5, seed + 4)
    yield "offset", ours(flat, device, dtype)[5:].reshape(*shape), flat[5:].reshape(shape)
    row = rand((1,) * (nd - 1) + shape[-1:], seed + 5)
    yield "broadcast", ours(row, device, dtype).expand(*shape), np.broadcast_to(row, shape)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("affine", [False, True], ids=["plain", "affine"])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 4, 2, 40)], ids=["short_rows", "long_rows"])
def test_layer_norm_every_layout_matches_torch(device, k, affine, shape):
    ns = shape[-k:]
    for name, x, xv in _layer_norm_views(shape, device, seed=k):
        w = b = tw = tb = None
        if affine:
            wv, bv = rand(ns, 20, 0.5, 1.0), rand(ns, 21)
            w, b, tw, tb = ours(wv, device), ours(bv, device), T(wv), T(bv)
        out = F.layer_norm(x, ns, w, b, eps=1e-5)
        want = TF.layer_norm(T(xv), ns, tw, tb, eps=1e-5)
        assert out.is_contiguous() and str(out.device) == device
        assert_close(out, want.numpy(), 1e-5, 1e-5, msg=f"layout {name}")
        # A view is normalised exactly as its contiguous copy: same numbers, bit for bit.
        np.testing.assert_array_equal(to_numpy(out), to_numpy(F.layer_norm(x.contiguous(), ns, w, b)), name)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [bm.float16, bm.bfloat16])
def test_layer_norm_half_types_accumulate_in_float32(device, dtype):
    for name, x, _ in _layer_norm_views((3, 6, 50), device, seed=4, dtype=dtype):
        xv = to_numpy(x).astype(np.float32)
        wv = rounded(rand(50, 5, 0.5, 1.0), dtype)
        out = F.layer_norm(x + 100, 50, ours(wv, device, dtype))  # a large mean: half sums would lose it
        want = TF.layer_norm(T(rounded(xv + 100, dtype)), (50,), T(wv))
        assert out.dtype == dtype
        assert_close(out, want.numpy(), *HALF_TOL[dtype], msg=name)


@pytest.mark.parametrize("device", DEVICES)
def test_layer_norm_strided_weight_and_bias(device):
    x = rand((4, 7), 1)
    wb = rand((2, 7), 2)
    w, b = ours(wb, device)[0], ours(rand((7, 3), 3), device)[:, 1]  # an offset row, a strided column
    want = TF.layer_norm(T(x), (7,), T(wb[0]), T(rand((7, 3), 3)[:, 1]))
    assert_close(F.layer_norm(ours(x, device), 7, w, b), want.numpy(), 1e-5, 1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k", [1, 9])
def test_layer_norm_over_many_unmergeable_dims(device, k):
    """10 dims of size 2, reversed: no two dims merge. k=9 gives a row of 9 strided dims (more than a
    Metal kernel takes: the host copies first), k=1 gives 9 row dims (the host splits the launch)."""
    a = rand((2,) * 10, 5)
    x = ours(a, device).permute(*range(9, -1, -1))
    xv = a.transpose(*range(9, -1, -1))
    want = TF.layer_norm(T(xv), xv.shape[-k:])
    assert_close(F.layer_norm(x, x.shape[-k:]), want.numpy(), 1e-5, 1e-5)


def test_layer_norm_long_rows_on_cpu():
    """Rows of many thousand elements, offset from zero: the blocked float32 sums stay accurate."""
    x = rand((3, 20000), 8, 2.0, 1000.0)
    out = F.layer_norm(ours(x, "cpu").T.contiguous().T, 20000)
    assert_close(out, TF.layer_norm(T(x).double(), (20000,)).numpy(), 1e-4, 1e-4)


# ---- issue 4: the transposed-view chain and the step-by-step variance ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("c", [8, 48], ids=["thread_rows", "group_rows"])
@pytest.mark.parametrize("conv", [False, True], ids=["random", "conv1x1"])
def test_reshape_transpose_layer_norm_chain_matches_torch(device, c, conv):
    """(N, C, H, W) -> reshape (N, C, HW) -> transpose (N, HW, C) -> LayerNorm(C) -> transpose ->
    reshape. The LayerNorm input's last dim has stride HW: the layout the competitors got wrong.
    The conv variant starts from a 1x1 convolution written with matmul (Conv2d lands separately)."""
    x = rand((2, 5 if conv else c, 5, 6), 1)
    tx = T(x)
    xb = ours(x, device)
    if conv:
        wv = rand((c, 5), 2)
        xb = (ours(wv, device) @ xb.reshape(2, 5, 30)).reshape(2, c, 5, 6)
        tx = TF.conv2d(tx, T(wv).reshape(c, 5, 1, 1))
    tln = torch.nn.LayerNorm(c)
    with torch.no_grad():
        tln.weight.copy_(T(rand(c, 3, 0.5, 1.0)))
        tln.bias.copy_(T(rand(c, 4)))
    ln = nn.LayerNorm(c, device=device)
    ln.load_state_dict({k: bm.tensor(v.detach().numpy()) for k, v in tln.state_dict().items()})
    y = ln(xb.reshape(2, c, 30).transpose(1, 2)).transpose(1, 2).reshape(2, c, 5, 6)
    with torch.no_grad():
        want = tln(tx.reshape(2, c, 30).transpose(1, 2)).transpose(1, 2).reshape(2, c, 5, 6)
    assert str(y.device) == device
    assert_close(y, want.numpy(), 1e-5, 1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [3, 5, 7])
def test_step_by_step_variance_equals_var_on_transposed_views(device, n):
    """mean, subtract, square, sum, divide on a transposed view == var(correction=0), along the
    strided dim and along the dense one, and == NumPy's float64 variance."""
    a = rand((n, 6), n, 3.0, 2.0)
    xt = ours(a, device).T  # (6, n): the reduced dim has stride 6
    for dim, ref in [(-1, a.T), (0, a)]:
        length = xt.shape[dim]
        mean = xt.mean(dim=dim, keepdim=True)
        dev = xt - mean
        steps = (dev * dev).sum(dim=dim) / length
        direct = xt.var(dim=dim, correction=0)
        assert_close(steps, direct, 1e-6, 1e-6, msg=f"dim {dim}")
        assert_close(steps, np.var(ref.astype(np.float64), axis=-1), 1e-5, 1e-6, msg=f"dim {dim}")
        assert_close((dev**2).sum(dim=dim) / length, direct, 1e-6, 1e-6, msg=f"pow, dim {dim}")
    # and what layer_norm computes from it, on the same view
    ln = F.layer_norm(xt, n)
    manual = (xt - xt.mean(dim=-1, keepdim=True)) / ((xt.var(dim=-1, correction=0, keepdim=True) + 1e-5) ** 0.5)
    assert_close(ln, manual, 1e-5, 1e-5)


# ---- errors: devices first, then shapes ----

@pytest.mark.parametrize("device", DEVICES)
def test_layer_norm_errors(device):
    x = bm.zeros(2, 3, 4, device=device)
    other = OTHER[device]
    # a wrong device wins over a wrong shape and a wrong dtype
    with pytest.raises(bm.DeviceMismatchError, match=rf"\[layer_norm\] .*input on {device}.*weight on {other}"):
        F.layer_norm(bm.zeros(2, 3, dtype=bm.int64, device=device), (5,), bm.ones(7, device=other))
    with pytest.raises(bm.DeviceMismatchError, match=r"\[layer_norm\] .*bias on"):
        F.layer_norm(x, (4,), bm.ones(4, device=device), bm.zeros(4, device=other))
    with pytest.raises(ValueError, match=r"\[layer_norm\] normalized_shape \(3,\) does not match .*\(2, 3, 4\)"):
        F.layer_norm(x, 3)
    with pytest.raises(ValueError, match=r"\[layer_norm\] normalized_shape \(1, 2, 3, 4\)"):
        F.layer_norm(x, (1, 2, 3, 4))
    with pytest.raises(ValueError, match=r"\[layer_norm\] normalized_shape must have at least one dim"):
        F.layer_norm(x, ())
    with pytest.raises(ValueError, match=r"\[layer_norm\] weight has shape \(3,\) but normalized_shape is \(4,\)"):
        F.layer_norm(x, 4, bm.ones(3, device=device))
    with pytest.raises(ValueError, match=r"\[layer_norm\] bias has shape"):
        F.layer_norm(x, (3, 4), None, bm.ones(4, device=device))
    with pytest.raises(bm.UnsupportedError, match=r"\[layer_norm\] dtype int64"):
        F.layer_norm(bm.zeros(2, 3, dtype=bm.int64, device=device), 3)
    with pytest.raises(TypeError, match=r"\[layer_norm\] expected"):
        F.layer_norm(x, "a")


@pytest.mark.parametrize("device", DEVICES)
def test_batch_norm_errors_and_nothing_changes(device):
    other = OTHER[device]
    x = bm.zeros(2, 4, 3, device=device)
    rm, rv = bm.zeros(4, device=device), bm.ones(4, device=device)
    bad_shape_other = bm.zeros(5, device=other)
    with pytest.raises(bm.DeviceMismatchError,
                       match=rf"\[batch_norm\] inputs are on different devices: input on {device}, running_mean on"):
        F.batch_norm(x, bad_shape_other, rv, training=True)
    with pytest.raises(bm.DeviceMismatchError, match=r"\[batch_norm\] .*running_var on"):
        F.batch_norm(bm.zeros(2, dtype=bm.int32, device=device), rm, bm.ones(4, device=other))
    with pytest.raises(bm.DeviceMismatchError, match=r"\[batch_norm\] .*bias on"):
        F.batch_norm(x, rm, rv, bm.ones(4, device=device), bm.ones(4, device=other), training=True)
    with pytest.raises(ValueError, match=r"\[batch_norm\] running_mean should have shape \(4,\) .*got shape \(5,\)"):
        F.batch_norm(x, bm.zeros(5, device=device), rv)
    with pytest.raises(ValueError, match=r"\[batch_norm\] running_var should have shape \(4,\) .*\(1, 4\)"):
        F.batch_norm(x, rm, bm.ones(1, 4, device=device), training=True)
    with pytest.raises(ValueError, match=r"\[batch_norm\] weight should have shape \(4,\)"):
        F.batch_norm(x, rm, rv, bm.ones(3, device=device), training=True)
    with pytest.raises(ValueError, match=r"\[batch_norm\] expected more than 1 value per channel"):
        F.batch_norm(bm.zeros(1, 4, device=device), rm, rv, training=True)
    with pytest.raises(ValueError, match=r"\[batch_norm\] running_mean and running_var must be given in eval"):
        F.batch_norm(x, None, None)
    with pytest.raises(ValueError, match=r"\[batch_norm\] running_mean and running_var must be given together"):
        F.batch_norm(x, rm, None, training=True)
    with pytest.raises(ValueError, match=r"\[batch_norm\] expected an input of shape \(N, C, ...\)"):
        F.batch_norm(bm.zeros(4, device=device), rm, rv)
    with pytest.raises(bm.UnsupportedError, match=r"\[batch_norm\] dtype int64"):
        F.batch_norm(bm.zeros(2, 4, dtype=bm.int64, device=device), rm, rv)
    with pytest.raises(bm.UnsupportedError, match=r"\[batch_norm\] running_mean must be a floating point tensor"):
        F.batch_norm(x, bm.zeros(4, dtype=bm.int64, device=device), rv)
    assert rm.tolist() == [0] * 4 and rv.tolist() == [1] * 4  # no failed call touched the running stats
