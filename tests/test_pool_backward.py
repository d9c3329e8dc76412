"""The pools' backward kernels and max_pool2d(return_indices=True) against torch (helpers:
conv_pool_backward_common.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer import _core
from conv_pool_backward_common import FLOATS, LAYOUTS, F, _raises, check, make, rand
from harness import DEVICES, dtypes_on

# ---------------------------------------------------------------- pooling

def torch_max_pool(x, **kw):
    v, i = torch.nn.functional.max_pool2d(torch.tensor(x), return_indices=True, **kw)
    return v.numpy(), i.numpy()


# (id, input shape, kwargs)
MAX = [
    ("k3_s2_p1", (2, 3, 7, 6), dict(kernel_size=3, stride=2, padding=1)),
    ("k2_default_stride", (1, 2, 6, 5), dict(kernel_size=2)),
    ("k3_s1_overlapping", (1, 2, 5, 5), dict(kernel_size=3, stride=1, padding=1)),
    ("k2_s1_overlapping", (2, 2, 4, 5), dict(kernel_size=2, stride=1)),
    ("dilation2_ceil_pad1", (2, 2, 6, 7), dict(kernel_size=2, stride=2, padding=1, dilation=2, ceil_mode=True)),
    ("rect", (1, 3, 7, 8), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1), dilation=(2, 1))),
    ("ceil_mode", (2, 1, 5, 7), dict(kernel_size=3, stride=2, ceil_mode=True)),
    ("global", (1, 2, 4, 3), dict(kernel_size=(4, 3))),
]


def _max_values(shape, dtype, seed, layout="contiguous"):
    """Small integers: many ties, so windows that overlap pick the same element often."""
    v = np.random.default_rng(seed).integers(-3, 4, shape).astype(np.float64)
    if layout == "batch_broadcast":
        v = np.broadcast_to(v[:1], v.shape).copy()
    return v


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("combo", MAX, ids=[c[0] for c in MAX])
def test_max_pool2d_with_indices_matches_torch(combo, device):
    _, shape, kw = combo
    for dtype in dtypes_on(device, FLOATS + [bm.int32, bm.int64]):
        x = _max_values(shape, dtype, 0)
        v_ref, i_ref = torch_max_pool(x, **kw)
        t = make(x, dtype, device) if dtype in FLOATS else bm.tensor(x.astype(np.int64), dtype=dtype, device=device)
        v, i = F.max_pool2d(t, return_indices=True, **kw)
        assert i.dtype == bm.int64 and v.dtype == dtype and str(i.device) == device
        np.testing.assert_array_equal(i.numpy(), i_ref)
        np.testing.assert_array_equal((v if dtype != bm.bfloat16 else v.to(bm.float32)).numpy(), v_ref)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS[1:])
def test_max_pool2d_with_indices_layouts(layout, device):
    _, shape, kw = MAX[2]
    x = _max_values(shape, bm.float32, 1, layout)
    v_ref, i_ref = torch_max_pool(x, **kw)
    v, i = F.max_pool2d(make(x, bm.float32, device, layout), return_indices=True, **kw)
    np.testing.assert_array_equal(i.numpy(), i_ref)
    np.testing.assert_array_equal(v.numpy(), v_ref)


@pytest.mark.parametrize("device", DEVICES)
def test_max_pool2d_with_indices_nan_and_edges(device):
    # NaN wins, the last of several; -inf ties keep the first tap; a window that dilation made miss
    # every element names its first tap (past the plane), as torch
    x = np.array([[[[1.0, np.nan, 3.0, np.nan], [np.inf, -np.inf, 2.0, 0.0]]]])
    for kw in [dict(kernel_size=(2, 4)), dict(kernel_size=2), dict(kernel_size=2, stride=1, padding=1)]:
        v_ref, i_ref = torch_max_pool(x, **kw)
        v, i = F.max_pool2d(bm.tensor(x, dtype=bm.float32, device=device), return_indices=True, **kw)
        np.testing.assert_array_equal(i.numpy(), i_ref)
        np.testing.assert_array_equal(v.numpy(), v_ref)
    x = np.full((1, 1, 2, 2), -np.inf)
    kw = dict(kernel_size=2, stride=1, padding=1)
    t = bm.tensor(x, dtype=bm.float32, device=device)
    np.testing.assert_array_equal(F.max_pool2d(t, return_indices=True, **kw)[1].numpy(),
                                  torch_max_pool(x, **kw)[1])
    x = np.array([[[[2.0, 5.0]]]])
    kw = dict(kernel_size=(1, 2), stride=1, padding=(0, 1), dilation=(1, 3))
    v, i = F.max_pool2d(bm.tensor(x, dtype=bm.float32, device=device), return_indices=True, **kw)
    v_ref, i_ref = torch_max_pool(x, **kw)
    np.testing.assert_array_equal(i.numpy(), i_ref)
    np.testing.assert_array_equal(v.numpy(), v_ref)


@pytest.mark.parametrize("device", DEVICES)
def test_max_pool2d_return_indices_api(device):
    x = _max_values((2, 5, 6), bm.float32, 2)  # unbatched
    v_ref, i_ref = torch_max_pool(x[None], kernel_size=3, stride=2, padding=1)
    t = bm.tensor(x, dtype=bm.float32, device=device)
    for out in [F.max_pool2d(t, 3, 2, 1, return_indices=True), F.max_pool2d_with_indices(t, 3, 2, 1),
                bm.nn.MaxPool2d(3, 2, 1, return_indices=True)(t)]:
        assert isinstance(out, tuple) and len(out) == 2
        np.testing.assert_array_equal(out[0].numpy(), v_ref[0])
        np.testing.assert_array_equal(out[1].numpy(), i_ref[0])
    assert not isinstance(bm.nn.MaxPool2d(3)(t), tuple)


def _torch_pool_grad(fn, x, gy, **kw):
    tx = torch.tensor(x, requires_grad=True)
    fn(tx, **kw).backward(torch.tensor(gy))
    return tx.grad.numpy()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("combo", MAX, ids=[c[0] for c in MAX])
def test_max_pool2d_backward_matches_torch(combo, device):
    _, shape, kw = combo
    for dtype in dtypes_on(device, FLOATS):
        x = _max_values(shape, dtype, 3)
        _, idx = F.max_pool2d(bm.tensor(x, dtype=dtype, device=device), return_indices=True, **kw)
        gy = rand(tuple(idx.shape), dtype, 4)
        ref = _torch_pool_grad(torch.nn.functional.max_pool2d, x, gy, **kw)
        got = _core._max_pool2d_backward(make(gy, dtype, device), idx, shape, **kw)
        check(got, ref, dtype, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS[1:])
def test_max_pool2d_backward_layouts(layout, device):
    """grad_output and the indices both in the layout."""
    _, shape, kw = MAX[3]
    for dtype in (bm.float32, bm.float16):
        x = _max_values(shape, dtype, 5, layout)
        _, i_ref = torch_max_pool(x, **kw)
        gy = rand(i_ref.shape, dtype, 6, layout)
        ref = _torch_pool_grad(torch.nn.functional.max_pool2d, x, gy, **kw)
        idx = make(i_ref, None, device, layout)
        got = _core._max_pool2d_backward(make(gy, dtype, device, layout), idx, shape, **kw)
        check(got, ref, dtype, device)


AVG = [
    ("k3_s2_p1", (2, 3, 7, 6), dict(kernel_size=3, stride=2, padding=1)),
    ("k2", (1, 2, 6, 5), dict(kernel_size=2)),
    ("overlapping_exclude_pad", (1, 2, 5, 6), dict(kernel_size=3, stride=1, padding=1, count_include_pad=False)),
    ("ceil_mode", (2, 2, 6, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("ceil_exclude_pad", (1, 2, 6, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                             count_include_pad=False)),
    ("divisor_override", (1, 2, 5, 5), dict(kernel_size=2, stride=1, padding=1, divisor_override=3)),
    ("negative_divisor", (1, 1, 4, 4), dict(kernel_size=2, divisor_override=-2)),
    ("rect", (1, 3, 7, 8), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1))),
    ("ceil_partial_window", (1, 1, 5, 5), dict(kernel_size=2, stride=2, ceil_mode=True)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("combo", AVG, ids=[c[0] for c in AVG])
def test_avg_pool2d_backward_matches_torch(combo, device):
    _, shape, kw = combo
    ys = tuple(torch.nn.functional.avg_pool2d(torch.zeros(shape), **kw).shape)
    for dtype in dtypes_on(device, FLOATS):
        gy = rand(ys, dtype, 7)
        ref = _torch_pool_grad(torch.nn.functional.avg_pool2d, np.zeros(shape), gy, **kw)
        args = (kw["kernel_size"], kw.get("stride"), kw.get("padding", 0), kw.get("ceil_mode", False),
                kw.get("count_include_pad", True), kw.get("divisor_override"))
        check(_core._avg_pool2d_backward(make(gy, dtype, device), shape, *args), ref, dtype, device)


ADAPTIVE = [((2, 3, 5, 7), (3, 4)), ((1, 2, 2, 3), (4, 5)), ((1, 2, 6, 6), (1, 1)), ((2, 1, 7, 5), (7, 5)),
            ((1, 2, 9, 4), (4, 3))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,out", ADAPTIVE, ids=[f"{s[2]}x{s[3]}_to_{o[0]}x{o[1]}" for s, o in ADAPTIVE])
def test_adaptive_avg_pool2d_backward_matches_torch(shape, out, device):
    for dtype in dtypes_on(device, FLOATS):
        gy = rand(shape[:2] + out, dtype, 8)
        ref = _torch_pool_grad(torch.nn.functional.adaptive_avg_pool2d, np.zeros(shape), gy, output_size=out)
        check(_core._adaptive_avg_pool2d_backward(make(gy, dtype, device), shape), ref, dtype, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS[1:] + ["zero_stride"])
def test_avg_pools_backward_layouts(layout, device):
    shape = (2, 2, 6, 7)
    kw = dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
    for dtype in (bm.float32, bm.bfloat16):
        for ys, ref_fn, call in [
            ((2, 2, 4, 4), lambda gy: _torch_pool_grad(torch.nn.functional.avg_pool2d, np.zeros(shape), gy, **kw),
             lambda g: _core._avg_pool2d_backward(g, shape, 3, 2, 1, True, False)),
            ((2, 2, 4, 3),
             lambda gy: _torch_pool_grad(torch.nn.functional.adaptive_avg_pool2d, np.zeros(shape), gy,
                                         output_size=(4, 3)),
             lambda g: _core._adaptive_avg_pool2d_backward(g, shape)),
        ]:
            if layout == "zero_stride":  # the gradient of a sum
                gy = np.full(ys, 1.5)
                g = bm.tensor(1.5, dtype=dtype, device=device).expand(*ys)
            else:
                gy = rand(ys, dtype, 9, layout)
                g = make(gy, dtype, device, layout)
            check(call(g), ref_fn(gy), dtype, device)


@pytest.mark.parametrize("device", DEVICES)
def test_pool_backward_unbatched_and_empty(device):
    x = _max_values((2, 5, 6), bm.float32, 10)
    t = bm.tensor(x, dtype=bm.float32, device=device)
    _, idx = F.max_pool2d(t, 2, 1, return_indices=True)
    gy = rand(tuple(idx.shape), bm.float32, 11)
    ref = _torch_pool_grad(torch.nn.functional.max_pool2d, x, gy, kernel_size=2, stride=1)
    check(_core._max_pool2d_backward(bm.tensor(gy, dtype=bm.float32, device=device), idx, (2, 5, 6), 2, 1), ref,
          bm.float32, device)
    gy = rand((2, 2, 3), bm.float32, 12)
    ref = _torch_pool_grad(torch.nn.functional.avg_pool2d, np.zeros((2, 5, 6)), gy, kernel_size=2)
    check(_core._avg_pool2d_backward(bm.tensor(gy, dtype=bm.float32, device=device), (2, 5, 6), 2), ref,
          bm.float32, device)
    ref = _torch_pool_grad(torch.nn.functional.adaptive_avg_pool2d, np.zeros((2, 5, 6)), gy, output_size=(2, 3))
    check(_core._adaptive_avg_pool2d_backward(bm.tensor(gy, dtype=bm.float32, device=device), (2, 5, 6)), ref,
          bm.float32, device)
    # no images: empty gradients; an empty adaptive output (or no channels there): zeros
    g = _core._avg_pool2d_backward(bm.zeros(0, 2, 2, 3, device=device), (0, 2, 5, 6), 2)
    assert tuple(g.shape) == (0, 2, 5, 6)
    g = _core._max_pool2d_backward(bm.zeros(0, 2, 2, 3, device=device), bm.zeros(0, 2, 2, 3, dtype=bm.int64,
                                   device=device), (0, 2, 5, 6), 2)
    assert tuple(g.shape) == (0, 2, 5, 6)
    g = _core._adaptive_avg_pool2d_backward(bm.zeros(1, 0, 2, 3, device=device), (1, 0, 5, 6))
    assert tuple(g.shape) == (1, 0, 5, 6)
    g = _core._adaptive_avg_pool2d_backward(bm.zeros(1, 2, 0, 3, device=device), (1, 2, 5, 6))
    assert tuple(g.shape) == (1, 2, 5, 6) and not g.numpy().any()


def test_pool_backward_devices_agree_bitwise():
    """The gather runs in the same order on every device: float32 results are bit-identical."""
    shape = (2, 3, 7, 6)
    x = _max_values(shape, bm.float32, 13)
    gy = rand((2, 3, 4, 3), bm.float32, 14)
    results = []
    for device in DEVICES:
        g = bm.tensor(gy, dtype=bm.float32, device=device)
        _, idx = F.max_pool2d(bm.tensor(x, dtype=bm.float32, device=device), 3, 2, 1, return_indices=True)
        results.append([_core._max_pool2d_backward(g, idx, shape, 3, 2, 1).numpy(),
                        _core._avg_pool2d_backward(g, shape, 3, 2, 1, False, False).numpy(),
                        _core._avg_pool2d_backward(g, shape, 3, 2, 1, False, True, 7).numpy(),
                        _core._adaptive_avg_pool2d_backward(g, shape).numpy()])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("device", DEVICES)
def test_pool_backward_errors(device):
    mb, ab, aab = "max_pool2d_backward", "avg_pool2d_backward", "adaptive_avg_pool2d_backward"
    g = bm.zeros(1, 2, 2, 2, device=device)
    idx = bm.zeros(1, 2, 2, 2, dtype=bm.int64, device=device)
    _core._max_pool2d_backward(g, idx, (1, 2, 4, 4), 2)  # the valid call the errors below start from
    other = [d for d in DEVICES if d != device]
    if other:
        _raises(bm.DeviceMismatchError, mb,
                lambda: _core._max_pool2d_backward(g, bm.zeros(1, dtype=bm.int32, device=other[0]), (1,), 0))
    _raises(bm.UnsupportedError, mb, lambda: _core._max_pool2d_backward(g.to(bm.int32), idx, (1,), 0))
    _raises(TypeError, mb, lambda: _core._max_pool2d_backward(g, idx.to(bm.int32), (1,), 0))
    _raises(bm.UnsupportedError, ab, lambda: _core._avg_pool2d_backward(g.to(bm.int64), (1,), 0))
    _raises(bm.UnsupportedError, aab, lambda: _core._adaptive_avg_pool2d_backward(g.to(bm.bool), (1,)))
    _raises(ValueError, mb, lambda: _core._max_pool2d_backward(g, idx, (1, 2, 4, 4), 0))
    _raises(ValueError, mb, lambda: _core._max_pool2d_backward(g, idx, (1, 2, 4, 4), 2, 2, 2))  # padding > k / 2
    _raises(ValueError, mb, lambda: _core._max_pool2d_backward(g, idx, (1, 2, 5, 5), 2, 1))  # grad shape differs
    _raises(ValueError, mb, lambda: _core._max_pool2d_backward(g, idx[:, :1], (1, 2, 4, 4), 2))  # indices shape
    _raises(ValueError, mb, lambda: _core._max_pool2d_backward(g, idx, (2, 4, 4), 2))  # rank differs
    _raises(ValueError, mb, lambda: _core._max_pool2d_backward(g, idx, (4, 4), 2))
    _raises(ValueError, mb, lambda: _core._max_pool2d_backward(g, idx, (1, 2, 0, 4), 2))
    _raises(ValueError, mb, lambda: _core._max_pool2d_backward(g, idx, (1, 2, 4, 4), 2, dilation=0))
    _raises(ValueError, ab, lambda: _core._avg_pool2d_backward(g, (1, 2, 4, 4), 2, divisor_override=0))
    _raises(ValueError, ab, lambda: _core._avg_pool2d_backward(g, (1, 2, 4, 4), (2, 2, 2)))
    _raises(ValueError, ab, lambda: _core._avg_pool2d_backward(g, (1, 2, 5, 4), 3))
    _raises(ValueError, ab, lambda: _core._avg_pool2d_backward(g, (1, -2, 4, 4), 2))
    _raises(ValueError, aab, lambda: _core._adaptive_avg_pool2d_backward(g, (2, 4, 4)))
    _raises(ValueError, aab, lambda: _core._adaptive_avg_pool2d_backward(g, (1, 3, 4, 4)))
    _raises(ValueError, aab, lambda: _core._adaptive_avg_pool2d_backward(g, (1, 2, 4, 0)))
    _raises(ValueError, "max_pool2d_with_indices", lambda: F.max_pool2d(g, 2, dilation=0, return_indices=True))
    _raises(ValueError, "max_pool2d_with_indices", lambda: F.max_pool2d(bm.zeros(3, device=device), 1,
                                                                        return_indices=True))
    _raises(bm.UnsupportedError, "max_pool2d_with_indices",
            lambda: F.max_pool2d(g.to(bm.bool), 2, return_indices=True))
