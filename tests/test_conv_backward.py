"""conv2d's backward kernels against torch's gradients (helpers: conv_pool_backward_common.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer import _core
from conv_pool_backward_common import FLOATS, LAYOUTS, _raises, check, make, rand
from harness import DEVICES, dtypes_on

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
# float32 input gradients of 3x3 stride-1 convolutions with >= 16 channels run through Winograd
# on the CPU (turned filters, padding 2 - p): odd channels, partial tiles, padding 0, 1, 2. With
# >= 32 channels each way the weight gradient does too (conv_winograd_backward.cpp): input
# channels padded to whole vectors, a partial last block of output channels, partial tiles,
# padding 0, 2 and uneven, and several blocks of 1024 tiles, one boundary inside an image; and at
# stride 2 with 64+ channels.
WINOGRAD = [
    ("winograd_pad1_tails", (2, 19, 13, 9), 17, (3, 3), dict(padding=1)),
    ("winograd_pad0", (1, 16, 10, 21), 18, (3, 3), dict()),
    ("winograd_pad2", (1, 20, 9, 11), 16, (3, 3), dict(padding=2)),
    ("winograd_pad_uneven", (2, 16, 11, 10), 16, (3, 3), dict(padding=(2, 0))),
    ("winograd_weight_tails", (2, 35, 9, 11), 50, (3, 3), dict(padding=1)),
    ("winograd_weight_pad0", (1, 40, 7, 6), 33, (3, 3), dict()),
    ("winograd_weight_pad2_uneven", (1, 32, 8, 9), 32, (3, 3), dict(padding=(2, 1))),
    ("winograd_weight_blocks", (2, 32, 66, 64), 32, (3, 3), dict(padding=1)),
    # The weight gradient at stride 2 (64+ channels each way, 128+ tiles; on AMD's Zen 3 / Zen 4,
    # elsewhere these rows take the direct kernel): odd channel counts and
    # output sizes, no padding, uneven padding, two blocks of tiles (481 and 31), the boundary inside
    # the second image.
    ("winograd_s2_weight_tails", (2, 65, 33, 35), 67, (3, 3), dict(stride=2, padding=1)),
    ("winograd_s2_weight_pad0", (1, 64, 60, 62), 64, (3, 3), dict(stride=2)),
    ("winograd_s2_weight_pad_uneven", (2, 64, 30, 37), 70, (3, 3), dict(stride=2, padding=(2, 0))),
    ("winograd_s2_weight_blocks", (2, 64, 62, 64), 64, (3, 3), dict(stride=2, padding=1)),
]

# Other float32 one-group convolutions with > 2 output channels run both gradients on the CPU's
# panel product kernel (conv_gemm_backward.cpp): 6-row / 16-column panel tails (odd channel
# counts, K not a multiple of 16), pixel blocks of 1024 (one image split into tiles, several
# images batched), stride, padding, dilation, 1x1 and 7x7 filters, one image.
PANEL = [
    ("panel_tails_3x3_s2", (2, 7, 13, 11), 11, (3, 3), dict(stride=2, padding=1)),
    ("panel_1x1_odd", (1, 17, 9, 7), 23, (1, 1), dict()),
    ("panel_1x1_s2_batched", (5, 9, 12, 12), 13, (1, 1), dict(stride=2)),
    ("panel_7x7_s2_pad3", (1, 3, 29, 27), 7, (7, 7), dict(stride=2, padding=3)),
    ("panel_dilated", (1, 5, 31, 27), 9, (3, 3), dict(padding=2, dilation=2)),
    ("panel_tiles", (2, 3, 41, 37), 7, (3, 3), dict(padding=1)),  # 1517 pixels: tiles of one image
    ("panel_5x3_mixed", (3, 6, 17, 19), 19, (5, 3), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2))),
    ("panel_wide_k", (2, 40, 6, 6), 8, (3, 3), dict(stride=2, padding=1)),  # K = 360
]
# With 24+ output channels (kx not dilated) the float32 weight gradient runs on the direct kernel
# (conv_direct_backward.cpp): a partial last block of output channels, (kx, c) groups of unequal
# sizes, a stem, several 1024-pixel blocks with one crossing images, rows no tap reads (1x2 stride 2;
# 1x1 stride 2 too, except on AVX2, which gives 1x1 to the panel kernel), dilation along H.
# With 24+ input channels the input gradient does, one stride phase at a time: stride 2, phases no
# tap reaches (stride 3 over a 2x2 kernel, dilation 2 with stride 2, 1x1 stride 2) whose pixels get
# zeros, a partial last block of input channels, unequal strides with dilation along W.
DIRECT = [
    ("direct_input_3x3_s2", (2, 26, 13, 11), 8, (3, 3), dict(stride=2, padding=1)),
    ("direct_input_2x2_s3", (1, 24, 11, 10), 5, (2, 2), dict(stride=3)),
    ("direct_input_dilated_s2", (1, 30, 12, 13), 6, (3, 3), dict(stride=2, padding=2, dilation=2)),
    ("direct_input_1x1_s2", (2, 50, 7, 9), 4, (1, 1), dict(stride=2)),
    ("direct_input_5x3_mixed", (1, 24, 12, 17), 26, (5, 3), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2))),
    ("direct_3x3_s2_tail", (2, 20, 11, 13), 50, (3, 3), dict(stride=2, padding=1)),
    ("direct_stem", (1, 3, 29, 27), 32, (7, 7), dict(stride=2, padding=3)),
    ("direct_blocks", (2, 5, 41, 37), 24, (3, 3), dict(padding=1)),
    # 6 pixel blocks (1024 + 416 per image): at 2 and 3 threads each thread takes whole blocks, and
    # their sums are handed over in block order
    ("direct_blocks_per_thread", (3, 4, 40, 36), 24, (5, 5), dict(padding=2)),
    ("direct_1x1_s2", (5, 9, 12, 12), 26, (1, 1), dict(stride=2)),
    ("direct_1x2_s2", (5, 9, 12, 12), 26, (1, 2), dict(stride=2)),
    # a 1x1 weight gradient (stored tile by tile) with several runs of input channels and a
    # partial last block of output channels
    ("direct_1x1_s2_runs", (2, 40, 9, 9), 50, (1, 1), dict(stride=2)),
    ("direct_dilated_h", (1, 6, 17, 19), 30, (5, 3), dict(stride=(2, 1), padding=(1, 2), dilation=(2, 1))),
    ("direct_input_wrapped", (2, 24, 29, 31), 6, (3, 3), dict(stride=2, padding=1)),  # phase rows 15, 16 wide
    # 81 taps: more than grad_w's last pass turns in registers (64), so it stores float by float
    ("direct_weight_9x9", (1, 3, 20, 19), 26, (9, 9), dict(padding=4)),
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
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("combo", WINOGRAD, ids=[c[0] for c in WINOGRAD])
def test_conv2d_backward_winograd(combo, layout, device):
    _conv_run(combo, device, bm.float32, layout)


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
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("combo", PANEL + DIRECT, ids=[c[0] for c in PANEL + DIRECT])
def test_conv2d_backward_panel(combo, layout, device):
    _conv_run(combo, device, bm.float32, layout)


@pytest.mark.parametrize("combo", [PANEL[5], DIRECT[0], DIRECT[7], DIRECT[8], WINOGRAD[7], WINOGRAD[-1]],
                         ids=lambda c: c[0])
def test_conv2d_backward_panel_thread_count(combo):
    """The panel, direct and Winograd kernels' bits do not depend on the thread count
    (docs/determinism.md)."""
    x, w, gy, _, _ = _conv_case(combo, bm.float32)
    g, wt, xt = (bm.tensor(a, dtype=bm.float32) for a in (gy, w, x))
    args = conv_args(combo[4])
    before = bm.get_num_threads()
    runs = []
    try:
        for n in (1, 2, 3):
            bm.set_num_threads(n)
            runs.append((_core._conv2d_backward_input(g, wt, x.shape, *args).numpy(),
                         _core._conv2d_backward_weight(g, xt, w.shape, *args).numpy()))
    finally:
        bm.set_num_threads(before)
    for gi, gw in runs[1:]:
        assert (gi == runs[0][0]).all() and (gw == runs[0][1]).all()


def test_conv2d_backward_input_filters_rewritten():
    """The CPU keeps the turned, transformed filters of Winograd's input gradient between calls:
    new values written into the same weight memory, by an in-place op or through the NumPy array
    bm.from_numpy shares, must give the new filters' gradient."""
    x, w, gy, _, _ = _conv_case(WINOGRAD[0], bm.float32)
    args = conv_args(WINOGRAD[0][4])
    g = bm.tensor(gy, dtype=bm.float32)
    w_np = np.array(w, dtype=np.float32)
    wt = bm.from_numpy(w_np)

    def expect():
        return torch_conv_grads(*(np.asarray(a, dtype=np.float64) for a in (x, w_np, gy)), **WINOGRAD[0][4])[0]

    check(_core._conv2d_backward_input(g, wt, x.shape, *args), expect(), bm.float32, "cpu")
    w_np[...] *= -0.5  # through the shared NumPy memory
    check(_core._conv2d_backward_input(g, wt, x.shape, *args), expect(), bm.float32, "cpu")
    wt.mul_(3.0)  # through bessemer
    check(_core._conv2d_backward_input(g, wt, x.shape, *args), expect(), bm.float32, "cpu")


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
