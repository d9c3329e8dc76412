"""The backward kernels of conv2d and the 2-D pools, and max_pool2d(return_indices=True), against
torch's gradients (torch autograd on CPU in float64, on the same values), on every device and float
dtype, for many argument combinations and for strided layouts of grad_output and of the saved
tensors (transposed, channels-last, step-sliced, offset, zero-stride); argument errors in the
project's order (devices, then dtypes, then shapes)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer import _core
from bessemer.testing import assert_close
from harness import DEVICES, dtypes_on, round_to

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


# ---------------------------------------------------------------- conv2d

def torch_conv_grads(x, w, gy, **kw):
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    with warnings.catch_warnings():  # torch warns that it pads a copy for padding='same' with even kernels
        warnings.simplefilter("ignore", UserWarning)
        y = torch.nn.functional.conv2d(tx, tw, **kw)
    y.backward(torch.tensor(gy))
    return tx.grad.numpy(), tw.grad.numpy()


def torch_conv_out_shape(xs, ws, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return tuple(torch.nn.functional.conv2d(torch.zeros(xs, dtype=torch.float64),
                                                torch.zeros(ws, dtype=torch.float64), **kw).shape)


def conv_args(kw):
    return (kw.get("stride", 1), kw.get("padding", 0), kw.get("dilation", 1), kw.get("groups", 1))


# (id, input shape, out_channels, kernel (kh, kw), kwargs). Og = out_channels / groups <= 2 takes
# the CPU's direct path, larger the BLAS one.
CONV = [
    ("3x3_pad1", (2, 4, 6, 5), 6, (3, 3), dict(padding=1)),
    ("3x3_stride2", (2, 3, 7, 8), 4, (3, 3), dict(stride=2)),
    ("1x1", (2, 6, 4, 4), 4, (1, 1), dict()),
    ("1x1_stride2", (2, 5, 5, 5), 3, (1, 1), dict(stride=2)),
    ("7x7_stride2_pad3", (1, 3, 11, 11), 4, (7, 7), dict(stride=2, padding=3)),
    ("dilation2", (1, 4, 8, 9), 4, (3, 3), dict(padding=2, dilation=2)),
    ("groups2", (2, 4, 5, 5), 6, (3, 3), dict(padding=1, groups=2)),
    ("groups2_two_out_per_group", (1, 6, 5, 5), 4, (3, 3), dict(padding=1, groups=2)),
    ("depthwise", (2, 4, 5, 6), 4, (3, 3), dict(padding=1, groups=4)),
    ("depthwise_x2_stride2", (1, 4, 6, 5), 8, (3, 3), dict(stride=2, padding=1, groups=4)),
    ("single_out_channel", (2, 3, 5, 4), 1, (2, 2), dict(padding=1)),
    ("nonsquare", (1, 3, 8, 9), 4, (3, 1), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2))),
    ("kernel_2x5", (2, 2, 6, 9), 3, (2, 5), dict(stride=(1, 3), padding=(0, 2))),
    ("stride_beyond_kernel", (1, 2, 9, 8), 3, (2, 2), dict(stride=3)),  # some pixels get no gradient
    ("same_even_kernel", (1, 3, 6, 7), 4, (4, 2), dict(padding="same")),
    ("same_dilated", (2, 3, 6, 7), 4, (3, 3), dict(padding="same", dilation=(2, 1))),
    ("valid", (2, 3, 5, 5), 4, (3, 3), dict(padding="valid")),
    ("kernel_equals_input", (2, 3, 3, 4), 5, (3, 4), dict()),
    ("groups3_tuple_args", (1, 6, 7, 7), 9, (3, 3), dict(stride=(2, 2), padding=(1, 1), groups=3)),
    ("many_images", (6, 3, 4, 4), 5, (3, 3), dict(padding=1)),
    ("large_plane", (1, 2, 34, 33), 3, (3, 3), dict(padding=1)),  # >= 1024 pixels: one image per block
]


def _conv_case(combo, dtype, seed=0, layout="contiguous"):
    _, xs, out_ch, (kh, kw), kwargs = combo
    groups = kwargs.get("groups", 1)
    ws = (out_ch, xs[1] // groups, kh, kw)
    x = rand(xs, dtype, seed, layout)
    w = rand(ws, dtype, seed + 1, layout)
    gy = rand(torch_conv_out_shape(xs, ws, **kwargs), dtype, seed + 2, layout)
    gx_ref, gw_ref = torch_conv_grads(x, w, gy, **kwargs)
    return x, w, gy, gx_ref, gw_ref


def _conv_run(combo, device, dtype, layout="contiguous", seed=0):
    kwargs = combo[4]
    x, w, gy, gx_ref, gw_ref = _conv_case(combo, dtype, seed, layout)
    g = make(gy, dtype, device, layout)
    gx = _core._conv2d_backward_input(g, make(w, dtype, device, layout), x.shape, *conv_args(kwargs))
    check(gx, gx_ref, dtype, device)
    gw = _core._conv2d_backward_weight(g, make(x, dtype, device, layout), w.shape, *conv_args(kwargs))
    check(gw, gw_ref, dtype, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("combo", CONV, ids=[c[0] for c in CONV])
def test_conv2d_backward_matches_torch(combo, device):
    for dtype in dtypes_on(device, FLOATS):
        _conv_run(combo, device, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS[1:])
@pytest.mark.parametrize("combo", [CONV[0], CONV[2], CONV[8], CONV[11], CONV[14]], ids=lambda c: c[0])
def test_conv2d_backward_layouts(combo, layout, device):
    for dtype in (bm.float32, bm.bfloat16):
        _conv_run(combo, device, dtype, layout)


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_backward_zero_stride_grad(device):
    """The gradient of y.sum(): one value expanded over every element (all strides zero)."""
    for combo in (CONV[0], CONV[8]):
        _, xs, out_ch, (kh, kw), kwargs = combo
        ws = (out_ch, xs[1] // kwargs.get("groups", 1), kh, kw)
        ys = torch_conv_out_shape(xs, ws, **kwargs)
        x, w = rand(xs, bm.float32, 1), rand(ws, bm.float32, 2)
        gy = np.full(ys, 0.75)
        gx_ref, gw_ref = torch_conv_grads(x, w, gy, **kwargs)
        g = bm.tensor(0.75, device=device).expand(*ys)
        check(_core._conv2d_backward_input(g, bm.tensor(w, dtype=bm.float32, device=device), xs, *conv_args(kwargs)),
              gx_ref, bm.float32, device)
        check(_core._conv2d_backward_weight(g, bm.tensor(x, dtype=bm.float32, device=device), ws, *conv_args(kwargs)),
              gw_ref, bm.float32, device)


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_backward_unbatched(device):
    """An unbatched (C, H, W) input takes an (O, OH, OW) grad_output and gives (C, H, W)."""
    x, w, gy, gx_ref, gw_ref = _conv_case(("u", (1, 4, 6, 5), 6, (3, 3), dict(padding=1, stride=2)), bm.float32)
    g = bm.tensor(gy[0], dtype=bm.float32, device=device)
    gx = _core._conv2d_backward_input(g, bm.tensor(w, dtype=bm.float32, device=device), (4, 6, 5), 2, 1)
    check(gx, gx_ref[0], bm.float32, device)
    gw = _core._conv2d_backward_weight(g, bm.tensor(x[0], dtype=bm.float32, device=device), w.shape, 2, 1)
    check(gw, gw_ref, bm.float32, device)


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_backward_empty(device):
    z = dict(device=device)
    # no images: an empty input gradient, a zero weight gradient
    gx = _core._conv2d_backward_input(bm.zeros(0, 4, 3, 3, **z), bm.ones(4, 2, 3, 3, **z), (0, 2, 5, 5))
    assert tuple(gx.shape) == (0, 2, 5, 5)
    gw = _core._conv2d_backward_weight(bm.zeros(0, 4, 3, 3, **z), bm.ones(0, 2, 5, 5, **z), (4, 2, 3, 3))
    assert tuple(gw.shape) == (4, 2, 3, 3) and not gw.numpy().any()
    # no output channels: the input gradient is zero
    gx = _core._conv2d_backward_input(bm.zeros(2, 0, 3, 3, **z), bm.ones(0, 2, 3, 3, **z), (2, 2, 5, 5))
    assert tuple(gx.shape) == (2, 2, 5, 5) and not gx.numpy().any()
    # an empty image that padding makes big enough: only padding was read, the weight gets zero
    gw = _core._conv2d_backward_weight(bm.ones(1, 3, 2, 2, **z), bm.ones(1, 2, 0, 0, **z), (3, 2, 3, 3), 1, 2)
    assert tuple(gw.shape) == (3, 2, 3, 3) and not gw.numpy().any()


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_backward_deterministic(device):
    """The same call twice gives the same bits (no atomics, a fixed order)."""
    x, w, gy, _, _ = _conv_case(CONV[6], bm.float32)
    g = bm.tensor(gy, dtype=bm.float32, device=device)
    wt = bm.tensor(w, dtype=bm.float32, device=device)
    xt = bm.tensor(x, dtype=bm.float32, device=device)
    a = [_core._conv2d_backward_input(g, wt, x.shape, 1, 1, 1, 2).numpy() for _ in range(2)]
    b = [_core._conv2d_backward_weight(g, xt, w.shape, 1, 1, 1, 2).numpy() for _ in range(2)]
    assert (a[0] == a[1]).all() and (b[0] == b[1]).all()


def _raises(exc, op, fn):
    with pytest.raises(exc, match=rf"\[{op}\]"):
        fn()


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_backward_errors(device):
    bi, bw = "conv2d_backward_input", "conv2d_backward_weight"
    g = bm.zeros(2, 4, 3, 3, device=device)
    w = bm.zeros(4, 2, 3, 3, device=device)
    x = bm.zeros(2, 2, 5, 5, device=device)
    _core._conv2d_backward_input(g, w, (2, 2, 5, 5))  # the valid call the errors below start from
    # devices first: even with a bad dtype and bad shapes
    other = [d for d in DEVICES if d != device]
    if other:
        o = other[0]
        _raises(bm.DeviceMismatchError, bi,
                lambda: _core._conv2d_backward_input(g, bm.zeros(1, dtype=bm.int32, device=o), (1,)))
        _raises(bm.DeviceMismatchError, bw,
                lambda: _core._conv2d_backward_weight(g, bm.zeros(1, dtype=bm.int32, device=o), (1,)))
    # then dtypes
    _raises(bm.UnsupportedError, bi, lambda: _core._conv2d_backward_input(g.to(bm.int32), w.to(bm.int32), (7,)))
    _raises(bm.UnsupportedError, bw, lambda: _core._conv2d_backward_weight(g.to(bm.bool), x.to(bm.bool), (7,)))
    _raises(TypeError, bi, lambda: _core._conv2d_backward_input(g, w.to(bm.float16), (7,)))
    _raises(TypeError, bw, lambda: _core._conv2d_backward_weight(g, x.to(bm.bfloat16), (7,)))
    # then shapes and arguments
    for shape in [(2, 4, 3, 4), (2, 4, 3), (1, 4, 3, 3), (2, 5, 3, 3)]:
        _raises(ValueError, bi, lambda s=shape: _core._conv2d_backward_input(bm.zeros(*s, device=device), w,
                                                                             (2, 2, 5, 5)))
        _raises(ValueError, bw, lambda s=shape: _core._conv2d_backward_weight(bm.zeros(*s, device=device), x,
                                                                              (4, 2, 3, 3)))
    _raises(ValueError, bi, lambda: _core._conv2d_backward_input(g, w, (2, 5, 5)))  # unbatched needs a 3-D grad
    _raises(ValueError, bi, lambda: _core._conv2d_backward_input(g, w, (5, 5)))
    _raises(ValueError, bi, lambda: _core._conv2d_backward_input(g, w, (2, 3, 5, 5)))  # channels != Cg * groups
    _raises(ValueError, bi, lambda: _core._conv2d_backward_input(g, w, (2, 2, -5, 5)))
    _raises(ValueError, bi, lambda: _core._conv2d_backward_input(g, bm.zeros(4, 2, 3, device=device), (2, 2, 5, 5)))
    _raises(ValueError, bi, lambda: _core._conv2d_backward_input(g, w, (2, 2, 5, 5), 1, "same", 1, 1))
    _raises(ValueError, bi, lambda: _core._conv2d_backward_input(g, w, (2, 2, 5, 5), 2, "same"))  # strided same
    _raises(ValueError, bi, lambda: _core._conv2d_backward_input(g, w, (2, 2, 5, 5), 0))
    _raises(ValueError, bi, lambda: _core._conv2d_backward_input(g, w, (2, 2, 5, 5), 1, "full"))
    _raises(ValueError, bi, lambda: _core._conv2d_backward_input(g, w, (2, 2, 5, 5), groups=3))
    _raises(ValueError, bi, lambda: _core._conv2d_backward_input(g, w, (2, 2, 1, 1)))  # smaller than the kernel
    _raises(ValueError, bw, lambda: _core._conv2d_backward_weight(g, x, (4, 2, 3)))
    _raises(ValueError, bw, lambda: _core._conv2d_backward_weight(g, x, (4, 3, 3, 3)))
    _raises(ValueError, bw, lambda: _core._conv2d_backward_weight(g, x, (4, 2, 0, 3)))
    _raises(ValueError, bw, lambda: _core._conv2d_backward_weight(g, x, (4, 2, 2, 2)))  # grad shape differs
    _raises(ValueError, bw, lambda: _core._conv2d_backward_weight(g, x, (4, 2, 3, 3), 1, (1, 2, 3)))


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
