"""Gradients of the nn ops (the rows whose backward is a kernel of its own) through autograd: the same
expression in bessemer and in torch (float64 reference), on every device, float dtype and several
input layouts, covering the arguments that change the backward."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import bessemer as bm
import bessemer.nn.functional as F
from bessemer.testing import assert_close
from harness import DEVICES, dtypes_on

FLOATS = [bm.float32, bm.float16, bm.bfloat16, bm.float64]
TOL = {bm.float64: (1e-8, 1e-9), bm.float32: (2e-4, 2e-5), bm.float16: (3e-2, 3e-2), bm.bfloat16: (1.5e-1, 1.5e-1)}
_NP = {bm.float32: np.float32, bm.float16: np.float16, bm.bfloat16: np.float32, bm.float64: np.float64}
LAYOUTS = ["contiguous", "transposed", "sliced", "channels_last", "offset"]


def _round(v, dtype):
    if dtype == bm.bfloat16:
        return (v.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32).astype(np.float64)
    return v.astype(_NP[dtype]).astype(np.float64)


def _make(v, dtype, device, layout):
    """v as a bessemer leaf in `layout` (the values, not the memory order, are v's)."""
    host = lambda a: bm.tensor(np.ascontiguousarray(a).astype(_NP[dtype]), dtype=dtype, device=device)
    if layout == "contiguous" or v.ndim < 2:
        t = host(v)
    elif layout == "transposed":
        t = host(np.swapaxes(v, -1, -2)).transpose(-1, -2)
    elif layout == "sliced":
        big = np.zeros(tuple(2 * s for s in v.shape))
        big[tuple(slice(None, None, 2) for _ in v.shape)] = v
        t = host(big)[tuple(slice(None, None, 2) for _ in v.shape)]
    elif layout == "offset":  # a view starting 3 elements into its storage
        flat = np.concatenate([np.zeros(3), v.reshape(-1)])
        t = host(flat)[3:].reshape(v.shape)
    elif layout == "channels_last" and v.ndim == 4:
        t = host(v.transpose(0, 2, 3, 1)).permute(0, 3, 1, 2)
    else:
        t = host(v)
    return t.requires_grad_()


# name, fn(lib, F, *xs), input shapes, which inputs get a layout (others contiguous), input domains
CASES = [
    ("conv2d", lambda lib, F, x, w, b: F.conv2d(x, w, b, stride=2, padding=1), [(2, 3, 7, 6), (4, 3, 3, 3), (4,)]),
    ("conv2d[same_dilated]", lambda lib, F, x, w: F.conv2d(x, w, padding="same", dilation=2),
     [(1, 2, 6, 6), (3, 2, 2, 3)]),
    ("conv2d[groups]", lambda lib, F, x, w, b: F.conv2d(x, w, b, groups=2), [(2, 4, 5, 5), (6, 2, 3, 3), (6,)]),
    ("conv2d[depthwise_unbatched]", lambda lib, F, x, w: F.conv2d(x, w, padding=1, groups=3),
     [(3, 5, 5), (3, 1, 3, 3)]),
    ("max_pool2d", lambda lib, F, x: F.max_pool2d(x, 3, 2, 1), [(2, 3, 7, 7)]),
    ("max_pool2d[ceil_dilated]", lambda lib, F, x: F.max_pool2d(x, 2, 2, 0, dilation=2, ceil_mode=True),
     [(1, 2, 7, 6)]),
    ("max_pool2d[return_indices]", lambda lib, F, x: F.max_pool2d(x, 2, return_indices=True)[0], [(2, 2, 4, 6)]),
    ("avg_pool2d", lambda lib, F, x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
     [(2, 3, 6, 7)]),
    ("avg_pool2d[divisor]", lambda lib, F, x: F.avg_pool2d(x, 2, 1, divisor_override=3), [(1, 2, 4, 5)]),
    ("adaptive_avg_pool2d", lambda lib, F, x: F.adaptive_avg_pool2d(x, (2, 3)), [(2, 3, 5, 7)]),
    ("batch_norm[train]", lambda lib, F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
     [(4, 3, 3, 2), (3,), (3,)]),
    ("batch_norm[train_running]", lambda lib, F, x: F.batch_norm(
        x, lib.zeros(3, dtype=x.dtype, device=x.device), lib.ones(3, dtype=x.dtype, device=x.device), training=True),
     [(5, 3)]),
    ("batch_norm[eval]", lambda lib, F, x, w, b: F.batch_norm(
        x, lib.full((3,), 0.5, dtype=x.dtype, device=x.device), lib.full((3,), 2.0, dtype=x.dtype, device=x.device),
        w, b, training=False), [(2, 3, 4), (3,), (3,)]),
    ("layer_norm", lambda lib, F, x, w, b: F.layer_norm(x, (3, 4), w, b), [(2, 3, 4), (3, 4), (3, 4)]),
    ("layer_norm[no_affine]", lambda lib, F, x: F.layer_norm(x, (5,)), [(4, 5)]),
    ("gelu", lambda lib, F, x: F.gelu(x), [(3, 4)]),
    ("gelu_tanh", lambda lib, F, x: F.gelu(x, approximate="tanh"), [(3, 4)]),
    ("silu", lambda lib, F, x: F.silu(x), [(3, 4)]),
    ("softmax", lambda lib, F, x: F.softmax(x, dim=1), [(2, 5, 3)]),
    ("log_softmax", lambda lib, F, x: F.log_softmax(x, dim=-1), [(3, 6)]),
    ("linear", lambda lib, F, x, w, b: F.linear(x, w, b), [(2, 3, 4), (5, 4), (5,)]),
    ("linear[single_row]", lambda lib, F, x, w, b: F.linear(x, w, b), [(1, 4), (5, 4), (5,)]),
]

LOSS_TARGET = np.array([1, 0, 3, 3, 2])
LOSS_CASES = [
    ("nll_loss", lambda lib, F, x, t, w: F.nll_loss(F.log_softmax(x, dim=1), t)),
    ("nll_loss[weight_ignore_sum]", lambda lib, F, x, t, w: F.nll_loss(x, t, w, ignore_index=3, reduction="sum")),
    ("nll_loss[none]", lambda lib, F, x, t, w: F.nll_loss(x, t, reduction="none")),
    ("cross_entropy", lambda lib, F, x, t, w: F.cross_entropy(x, t)),
    ("cross_entropy[weight_ignore]", lambda lib, F, x, t, w: F.cross_entropy(x, t, w, ignore_index=0)),
    ("cross_entropy[smoothing]", lambda lib, F, x, t, w: F.cross_entropy(x, t, w, label_smoothing=0.2)),
    ("cross_entropy[smoothing_none]", lambda lib, F, x, t, w: F.cross_entropy(x, t, label_smoothing=0.1,
                                                                              reduction="none")),
    ("cross_entropy[probabilities]", lambda lib, F, x, t, w: F.cross_entropy(
        x, lib.softmax(x.detach() * 0.5 + 0.1, dim=1))),
]


def _compare(name, fn, shapes, device, layout, dtype, extra=()):
    rng = np.random.default_rng(zlib.crc32(f"{name}/{layout}".encode()))
    vals = [_round(rng.standard_normal(s), dtype) for s in shapes]
    xs = [_make(v, dtype, device, layout if i == 0 else "contiguous") for i, v in enumerate(vals)]
    ts = [torch.tensor(v, requires_grad=True) for v in vals]
    y = fn(bm, F, *xs, *[e[0] for e in extra])
    yt = fn(torch, TF, *ts, *[e[1] for e in extra])
    g = _round(rng.standard_normal(tuple(yt.shape)), dtype)
    y.backward(bm.tensor(g.astype(_NP[dtype]), dtype=dtype, device=device))
    yt.backward(torch.tensor(g))
    rtol, atol = TOL[dtype]
    for i, (x, t) in enumerate(zip(xs, ts)):
        assert x.grad is not None and x.grad.dtype == dtype, f"{name}: input {i}"
        assert_close(x.grad, t.grad.numpy(), rtol, atol, check_dtype=False, msg=f"{name}: input {i}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_nn_gradients_match_torch(case, layout, device):
    name, fn, shapes = case
    for dtype in dtypes_on(device, FLOATS):
        _compare(name, fn, shapes, device, layout, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", LOSS_CASES, ids=lambda c: c[0])
def test_loss_gradients_match_torch(case, device):
    name, fn = case
    for dtype in dtypes_on(device, FLOATS):
        for layout in ("contiguous", "transposed"):
            extra = [(bm.tensor(LOSS_TARGET, device=device), torch.tensor(LOSS_TARGET)),
                     (bm.tensor([0.5, 1.0, 2.0, 1.5], dtype=dtype, device=device),
                      torch.tensor([0.5, 1.0, 2.0, 1.5], dtype=torch.float64))]
            _compare(name, fn, [(5, 4)], device, layout, dtype, extra)


@pytest.mark.parametrize("device", DEVICES)
def test_embedding_and_dropout_gradients(device):
    idx = np.array([[1, 3, 1], [0, 2, 3]])
    w = np.random.default_rng(0).standard_normal((4, 3))
    for pad in (None, 1):
        bw = bm.tensor(w.astype(np.float32), device=device, requires_grad=True)
        tw = torch.tensor(w.astype(np.float32), requires_grad=True)
        (F.embedding(bm.tensor(idx, device=device), bw, padding_idx=pad) ** 2).sum().backward()
        (TF.embedding(torch.tensor(idx), tw, padding_idx=pad) ** 2).sum().backward()
        assert_close(bw.grad, tw.grad.numpy(), 1e-5, 1e-6)
    x = bm.ones(4, 5, device=device, requires_grad=True)
    y = F.dropout(x, 0.4)
    (y * 3).sum().backward()
    kept = y.detach().numpy() != 0
    assert_close(x.grad, np.where(kept, 3 / 0.6, 0.0), 1e-6, 1e-6)  # the same mask as the forward


def test_second_derivatives_through_nn_kernels_are_a_clear_error():
    x = bm.randn(1, 2, 5, 5, requires_grad=True)
    w = bm.randn(3, 2, 3, 3, requires_grad=True)
    with pytest.raises(bm.UnsupportedError, match=r"\[conv2d\] second derivatives"):
        bm.autograd.grad(F.conv2d(x, w).sum(), [w], create_graph=True)
