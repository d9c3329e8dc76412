"""Pooling against torch CPU (the oracle), on every device: argument combinations, input layouts,
dtypes, NaN, empty batches, errors, and the layers."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import bessemer as bm
import bessemer.nn.functional as F
from bessemer.testing import assert_close
from harness import DEVICES, TOL, dtypes_on, round_to

FLOAT_DTYPES = [bm.float32, bm.float16, bm.bfloat16, bm.float64]
LAYOUTS = ["contiguous", "transposed", "sliced", "offset", "expanded", "channels_last"]
_NP = {
    bm.float32: np.float32,
    bm.float16: np.float16,
    bm.bfloat16: np.float32,
    bm.float64: np.float64,
    bm.int32: np.int32,
    bm.int64: np.int64,
}


def make(values: np.ndarray, dtype, device: str, layout: str = "contiguous"):
    """A bessemer tensor holding `values` (already rounded to dtype) in the given memory layout."""

    def host(v):
        return bm.tensor(np.ascontiguousarray(v).astype(_NP[dtype]), dtype=dtype, device=device)

    nd = values.ndim
    if layout == "contiguous":
        return host(values)
    if layout == "transposed":  # an H/W-transposed view: W is the slow dim
        return host(np.swapaxes(values, -1, -2)).transpose(-1, -2)
    if layout == "sliced":  # every dim stepped by 2 from 1, C included
        base = np.zeros(tuple(2 * s + 1 for s in values.shape), values.dtype)
        base[(slice(1, None, 2),) * nd] = values
        return host(base)[(slice(1, None, 2),) * nd]
    if layout == "offset":
        flat = np.concatenate([np.zeros(3, values.dtype), values.ravel()])
        return host(flat)[3:].reshape(*values.shape)
    if layout == "expanded":  # one batch entry broadcast over N (zero batch stride)
        t = host(values[:1])
        return t.expand(*values.shape)
    if layout == "channels_last":  # (N, H, W, C) memory seen as (N, C, H, W)
        perm = (0, 2, 3, 1) if nd == 4 else (1, 2, 0)
        back = (0, 3, 1, 2) if nd == 4 else (2, 0, 1)
        return host(np.transpose(values, perm)).permute(*back)
    raise ValueError(layout)


def sample(shape, dtype, seed=0, expanded=False):
    rng = np.random.default_rng(seed)
    if dtype in (bm.int32, bm.int64):
        v = rng.integers(-50, 50, shape).astype(np.int64)
    else:
        v = round_to(rng.standard_normal(shape) * 2, dtype)
    if expanded:  # what the "expanded" layout holds
        v = np.broadcast_to(v[:1], shape).copy()
    return v


def torch_ref(values: np.ndarray, fn):
    """The torch result on the exact values, in float64 (int64 for integers)."""
    t = torch.from_numpy(values.astype(np.float64) if values.dtype.kind == "f" else values.astype(np.int64))
    return fn(t).numpy()


def check(values, dtype, device, layout, ours, theirs, exact=False):
    x = make(values, dtype, device, layout)
    out = ours(x)
    want = torch_ref(values, theirs)
    assert out.dtype == dtype and str(out.device) == device
    assert tuple(out.shape) == want.shape, (tuple(out.shape), want.shape)
    rtol, atol = (0, 0) if exact else TOL[dtype]
    assert_close(out, want, rtol, atol, check_dtype=False)


# ---- max_pool2d ----
# (input shape, kwargs): default stride, rectangular windows, dilation, ceil_mode (including the
# rule that drops a last window starting in the right padding), padding == kernel // 2.
MAX_ARGS = [
    ((2, 3, 9, 11), dict(kernel_size=2)),
    ((2, 3, 9, 11), dict(kernel_size=3, stride=2, padding=1)),
    ((2, 3, 9, 11), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0))),
    ((2, 3, 9, 11), dict(kernel_size=3, stride=1, padding=1, dilation=2)),
    ((2, 3, 9, 11), dict(kernel_size=(2, 3), stride=2, padding=(1, 1), dilation=(2, 1), ceil_mode=True)),
    ((2, 3, 5, 5), dict(kernel_size=2, stride=2, padding=1, ceil_mode=True)),
    ((2, 3, 8, 7), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)),
    ((2, 3, 9, 11), dict(kernel_size=3, stride=[])),
    ((3, 9, 11), dict(kernel_size=3, stride=2, padding=1)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,kw", MAX_ARGS, ids=[f"{s}-{k}" for s, k in MAX_ARGS])
def test_max_pool2d_args(device, shape, kw):
    v = sample(shape, bm.float32)
    tkw = {**kw, "stride": kw.get("stride") or None}
    check(
        v,
        bm.float32,
        device,
        "contiguous",
        lambda x: F.max_pool2d(x, **kw),
        lambda t: TF.max_pool2d(t, **tkw),
        exact=True,
    )


def test_ceil_mode_rule_drops_a_window_starting_in_padding():
    # (5 + 2 - 1 - 1 + 1) // 2 + 1 = 4 windows, but the 4th would start at 6 - 1 = 5 >= H: 3.
    x = bm.zeros(1, 1, 5, 5)
    assert F.max_pool2d(x, 2, 2, 1, ceil_mode=True).shape == (1, 1, 3, 3)
    assert F.avg_pool2d(x, 2, 2, 1, ceil_mode=True).shape == (1, 1, 3, 3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_max_pool2d_layouts(device, layout):
    for shape in [(2, 3, 9, 11), (3, 9, 11)]:
        if layout == "expanded" and len(shape) == 3:
            continue
        v = sample(shape, bm.float32, expanded=layout == "expanded")
        check(
            v,
            bm.float32,
            device,
            layout,
            lambda x: F.max_pool2d(x, 3, 2, 1),
            lambda t: TF.max_pool2d(t, 3, 2, 1),
            exact=True,
        )


@pytest.mark.parametrize("device", DEVICES)
def test_max_pool2d_dtypes(device):
    for dtype in dtypes_on(device, FLOAT_DTYPES + [bm.int32, bm.int64]):
        for layout in ("contiguous", "transposed"):
            v = sample((2, 3, 7, 6), dtype, seed=1)
            check(
                v,
                dtype,
                device,
                layout,
                lambda x: F.max_pool2d(x, (3, 2), 2, 1, ceil_mode=True),
                lambda t: TF.max_pool2d(t, (3, 2), 2, 1, ceil_mode=True),
                exact=True,
            )


@pytest.mark.parametrize("device", DEVICES)
def test_max_pool2d_nan_propagates(device):
    for dtype in dtypes_on(device, FLOAT_DTYPES):
        v = sample((1, 2, 6, 6), dtype)
        v[0, 0, 0, 0] = np.nan  # first element of a window
        v[0, 0, 3, 5] = np.nan  # last column, inside two overlapping windows
        v[0, 1, 5, 5] = np.nan  # last element of the last window
        check(
            v,
            dtype,
            device,
            "contiguous",
            lambda x: F.max_pool2d(x, 3, 2, 1),
            lambda t: TF.max_pool2d(t, 3, 2, 1),
            exact=True,
        )
        out = F.max_pool2d(make(v, dtype, device), 3, 2, 1).to(bm.float64 if device == "cpu" else bm.float32).numpy()
        assert np.isnan(out).sum() == 4 and np.isnan(out[0, 1, 2, 2])


@pytest.mark.parametrize("device", DEVICES)
def test_max_pool2d_window_outside_the_input(device):
    # dilation 3 steps over both input rows of the 2x2 input: -inf, or the lowest integer (torch's
    # results, checked here for float32 and int64)
    v = np.array([[[[1, 2], [3, 4]]]])
    lowest = {bm.int32: np.iinfo(np.int32).min, bm.int64: np.iinfo(np.int64).min}
    for dtype in dtypes_on(device, FLOAT_DTYPES + [bm.int32, bm.int64]):
        out = F.max_pool2d(make(v, dtype, device), 2, stride=1, padding=1, dilation=3)
        assert out.tolist() == [[[[lowest.get(dtype, -np.inf)]]]]
    for t in (torch.from_numpy(v), torch.from_numpy(v).float()):
        assert TF.max_pool2d(t, 2, stride=1, padding=1, dilation=3).item() == {torch.int64: lowest[bm.int64]}.get(
            t.dtype, -np.inf
        )


# ---- avg_pool2d ----
AVG_ARGS = [
    ((2, 3, 9, 11), dict(kernel_size=2)),
    ((2, 3, 9, 11), dict(kernel_size=3, stride=2, padding=1)),
    ((2, 3, 9, 11), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ((2, 3, 9, 11), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ((2, 3, 9, 11), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ((2, 3, 9, 11), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), ceil_mode=True, divisor_override=5)),
    ((2, 3, 9, 11), dict(kernel_size=3, stride=2, padding=1, divisor_override=-3)),
    ((2, 3, 8, 7), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True, count_include_pad=False)),
    ((2, 3, 8, 7), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)),
    ((3, 9, 11), dict(kernel_size=(2, 4), stride=(1, 3), padding=(1, 2))),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,kw", AVG_ARGS, ids=[f"{s}-{k}" for s, k in AVG_ARGS])
def test_avg_pool2d_args(device, shape, kw):
    v = sample(shape, bm.float32)
    check(v, bm.float32, device, "contiguous", lambda x: F.avg_pool2d(x, **kw), lambda t: TF.avg_pool2d(t, **kw))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_avg_pool2d_layouts(device, layout):
    v = sample((2, 3, 9, 11), bm.float32, expanded=layout == "expanded")
    kw = dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
    check(v, bm.float32, device, layout, lambda x: F.avg_pool2d(x, **kw), lambda t: TF.avg_pool2d(t, **kw))


@pytest.mark.parametrize("device", DEVICES)
def test_avg_pool2d_dtypes(device):
    for dtype in dtypes_on(device, FLOAT_DTYPES):
        for layout in ("contiguous", "sliced"):
            v = sample((2, 3, 7, 6), dtype, seed=2)
            check(v, dtype, device, layout, lambda x: F.avg_pool2d(x, 3, 2, 1), lambda t: TF.avg_pool2d(t, 3, 2, 1))


@pytest.mark.parametrize("device", DEVICES)
def test_half_types_accumulate_in_float32(device):
    # 256 values near 257: a float16 running sum would overflow (65504) and a bfloat16 one would
    # lose the small parts; float32 sums them exactly, and only the mean is rounded.
    v = np.full((1, 1, 16, 16), 256.0)
    v[..., ::2, :] += 2.0
    for dtype in (bm.float16, bm.bfloat16):
        x = make(v, dtype, device)
        want = float(round_to(np.array(257.0), dtype))
        assert F.avg_pool2d(x, 16).item() == want
        assert F.adaptive_avg_pool2d(x, 1).item() == want
        assert F.adaptive_avg_pool2d(x, (1, 2)).tolist() == [[[[want, want]]]]


# ---- adaptive_avg_pool2d ----
ADAPTIVE_ARGS = [
    ((2, 3, 7, 11), 1),
    ((2, 3, 7, 11), (1, 1)),
    ((2, 3, 7, 11), (3, 5)),
    ((2, 3, 7, 11), (None, 3)),
    ((2, 3, 7, 11), (4, None)),
    ((2, 3, 7, 11), (9, 13)),  # more outputs than inputs: overlapping windows
    ((2, 3, 7, 11), (7, 11)),
    ((2, 3, 7, 11), (0, 3)),  # an empty output
    ((3, 7, 11), (2, 3)),
    ((2, 512, 7, 7), 1),  # ResNet's head (the CPU's contiguous global-pool path)
    ((3, 1, 16, 16), 1),  # one channel: planes spaced by the batch stride
    ((2, 3, 40, 40), 1),  # planes too long for the short-plane sum
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,size", ADAPTIVE_ARGS, ids=[f"{s}-{o}" for s, o in ADAPTIVE_ARGS])
def test_adaptive_avg_pool2d_args(device, shape, size):
    v = sample(shape, bm.float32)
    check(
        v,
        bm.float32,
        device,
        "contiguous",
        lambda x: F.adaptive_avg_pool2d(x, size),
        lambda t: TF.adaptive_avg_pool2d(t, size),
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_adaptive_avg_pool2d_layouts(device, layout):
    v = sample((2, 3, 7, 11), bm.float32, expanded=layout == "expanded")
    for size in [(3, 5), 1]:
        check(
            v,
            bm.float32,
            device,
            layout,
            lambda x, size=size: F.adaptive_avg_pool2d(x, size),
            lambda t, size=size: TF.adaptive_avg_pool2d(t, size),
        )


@pytest.mark.parametrize("device", DEVICES)
def test_adaptive_avg_pool2d_dtypes(device):
    for dtype in dtypes_on(device, FLOAT_DTYPES):
        for size in [(3, 5), 1]:
            v = sample((2, 3, 7, 11), dtype, seed=3)
            check(
                v,
                dtype,
                device,
                "transposed",
                lambda x, size=size: F.adaptive_avg_pool2d(x, size),
                lambda t, size=size: TF.adaptive_avg_pool2d(t, size),
            )


# ---- empty batches, errors ----
@pytest.mark.parametrize("device", DEVICES)
def test_empty_batch(device):
    x = bm.zeros(0, 3, 8, 8, device=device)
    assert F.max_pool2d(x, 3, 2, 1).shape == (0, 3, 4, 4)
    assert F.avg_pool2d(x, 2).shape == (0, 3, 4, 4)
    assert F.adaptive_avg_pool2d(x, (2, 5)).shape == (0, 3, 2, 5)
    assert F.adaptive_avg_pool2d(bm.zeros(2, 0, 8, 8, device=device), 2).shape == (2, 0, 2, 2)


def _raises(exc, op, fn):
    with pytest.raises(exc, match=rf"\[{op}\]"):
        fn()


@pytest.mark.parametrize("device", DEVICES)
def test_errors(device):
    x = bm.zeros(1, 2, 5, 5, device=device)
    for f, op in [
        (lambda a, **k: F.max_pool2d(a, **k), "max_pool2d"),
        (lambda a, **k: F.avg_pool2d(a, **k), "avg_pool2d"),
    ]:
        _raises(ValueError, op, lambda f=f: f(x, kernel_size=0, stride=1))
        _raises(ValueError, op, lambda f=f: f(x, kernel_size=2, stride=0))
        _raises(ValueError, op, lambda f=f: f(x, kernel_size=2, padding=-1))
        _raises(ValueError, op, lambda f=f: f(x, kernel_size=2, padding=2))  # more than kernel // 2
        _raises(ValueError, op, lambda f=f: f(x, kernel_size=(3, 3, 3)))
        _raises(ValueError, op, lambda f=f: f(x, kernel_size=6))  # output size 0
        _raises(ValueError, op, lambda f=f: f(bm.zeros(5, 5, device=device), kernel_size=2))
        _raises(ValueError, op, lambda f=f: f(bm.zeros(1, 1, 1, 5, 5, device=device), kernel_size=2))
        _raises(ValueError, op, lambda f=f: f(bm.zeros(2, 0, 5, 5, device=device), kernel_size=2))
        _raises(ValueError, op, lambda f=f: f(bm.zeros(2, 3, 5, 0, device=device), kernel_size=1))
        _raises(ValueError, op, lambda f=f: f(bm.zeros(0, 5, 5, device=device), kernel_size=2))
        _raises(TypeError, op, lambda f=f: f(x, kernel_size="2"))
    _raises(ValueError, "max_pool2d", lambda: F.max_pool2d(x, 2, dilation=0))
    _raises(ValueError, "avg_pool2d", lambda: F.avg_pool2d(x, 2, divisor_override=0))
    _raises(ValueError, "adaptive_avg_pool2d", lambda: F.adaptive_avg_pool2d(x, -1))
    _raises(ValueError, "adaptive_avg_pool2d", lambda: F.adaptive_avg_pool2d(x, (2,)))
    _raises(ValueError, "adaptive_avg_pool2d", lambda: F.adaptive_avg_pool2d(x, (2, 3, 4)))
    _raises(ValueError, "adaptive_avg_pool2d", lambda: F.adaptive_avg_pool2d(bm.zeros(2, 3, 0, 4, device=device), 2))
    _raises(ValueError, "adaptive_avg_pool2d", lambda: F.adaptive_avg_pool2d(bm.zeros(4, 4, device=device), 2))
    _raises(TypeError, "adaptive_avg_pool2d", lambda: F.adaptive_avg_pool2d(x, None))
    _raises(TypeError, "adaptive_avg_pool2d", lambda: F.adaptive_avg_pool2d(x, (2.0, 3)))


@pytest.mark.parametrize("device", DEVICES)
def test_dtype_is_checked_before_shape(device):
    # a 2-D input with bad window arguments, in a dtype the op does not take: the dtype error wins
    for dt in (bm.int32, bm.int64, bm.bool):
        x = bm.zeros(5, 5, dtype=dt, device=device)
        _raises(bm.UnsupportedError, "avg_pool2d", lambda x=x: F.avg_pool2d(x, 0))
        _raises(bm.UnsupportedError, "adaptive_avg_pool2d", lambda x=x: F.adaptive_avg_pool2d(x, -1))
    _raises(bm.UnsupportedError, "max_pool2d", lambda: F.max_pool2d(bm.zeros(5, 5, dtype=bm.bool, device=device), 0))


# ---- layers ----
@pytest.mark.parametrize("device", DEVICES)
def test_layers_match_torch(device):
    v = sample((2, 3, 9, 11), bm.float32)
    layers = [
        (bm.nn.MaxPool2d(3, 2, 1), torch.nn.MaxPool2d(3, 2, 1)),
        (
            bm.nn.MaxPool2d((3, 2), dilation=(1, 2), ceil_mode=True),
            torch.nn.MaxPool2d((3, 2), dilation=(1, 2), ceil_mode=True),
        ),
        (bm.nn.AvgPool2d(3, 2, 1, count_include_pad=False), torch.nn.AvgPool2d(3, 2, 1, count_include_pad=False)),
        (bm.nn.AvgPool2d(2, divisor_override=3), torch.nn.AvgPool2d(2, divisor_override=3)),
        (bm.nn.AdaptiveAvgPool2d((None, 4)), torch.nn.AdaptiveAvgPool2d((None, 4))),
        (bm.nn.AdaptiveAvgPool2d(1), torch.nn.AdaptiveAvgPool2d(1)),
    ]
    for ours, theirs in layers:
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == [] and list(ours.parameters()) == []
        check(v, bm.float32, device, "contiguous", ours, theirs)
    m = bm.nn.MaxPool2d(3)
    assert (m.kernel_size, m.stride, m.padding, m.dilation, m.return_indices, m.ceil_mode) == (3, 3, 0, 1, False, False)
    a = bm.nn.AvgPool2d(2)
    assert (a.stride, a.ceil_mode, a.count_include_pad, a.divisor_override) == (2, False, True, None)
