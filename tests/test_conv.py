"""conv2d and nn.Conv2d against torch CPU (the oracle, computed in float64 on the same values), on
every device, for argument combinations, input layouts and dtypes; argument errors in the
project's order (devices, then dtypes, then shapes)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer.testing import assert_close
from harness import DEVICES, dtypes_on, round_to

F = bm.nn.functional
FLOATS = [bm.float32, bm.float16, bm.bfloat16, bm.float64]
TOL = {bm.float64: (1e-10, 1e-10), bm.float32: (2e-5, 5e-5), bm.float16: (2e-3, 2e-3),
       bm.bfloat16: (1.6e-2, 1.6e-2)}
LAYOUTS = ["contiguous", "channels_last", "sliced", "offset", "transposed"]


def _storage(values: np.ndarray, dtype) -> np.ndarray:
    return values.astype(np.float16 if dtype == bm.float16 else np.float64 if dtype == bm.float64 else np.float32)


def make(values: np.ndarray, dtype, device: str, layout: str = "contiguous"):
    """A bessemer tensor holding `values` (already representable in dtype) in the given layout."""
    def build(base):
        return bm.tensor(_storage(base, dtype), dtype=dtype, device=device)

    nd = values.ndim
    if layout == "contiguous":
        return build(values)
    if layout == "channels_last" and nd == 4:  # memory order N, H, W, C
        return build(np.ascontiguousarray(values.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
    if layout == "transposed" and nd >= 2:  # the last two dims swapped in memory
        return build(np.ascontiguousarray(np.swapaxes(values, -1, -2))).transpose(-1, -2)
    if layout == "sliced":  # every dim step-sliced out of a larger tensor, with a start offset
        base = np.zeros(tuple(2 * s + 1 for s in values.shape))
        idx = tuple(slice(1, None, 2) for _ in values.shape)
        base[idx] = values
        return build(base)[idx]
    if layout == "offset":
        flat = np.concatenate([np.zeros(7), values.ravel()])
        return build(flat)[7:].reshape(*values.shape)
    return build(values)  # layouts that do not apply to this rank


def rand(shape, dtype, seed):
    return round_to(np.random.default_rng(seed).standard_normal(shape), dtype)


def torch_conv(x, w, b, **kw):
    tb = None if b is None else torch.from_numpy(b)
    with warnings.catch_warnings():  # torch warns that it pads a copy for padding='same' with even kernels
        warnings.simplefilter("ignore", UserWarning)
        return torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), tb, **kw).numpy()


# (id, input shape, out_channels, kernel (kh, kw), kwargs, bias)
COMBOS = [
    ("3x3_pad1", (2, 4, 7, 6), 5, (3, 3), dict(padding=1), True),
    ("3x3_stride2_nobias", (2, 3, 9, 8), 4, (3, 3), dict(stride=2), False),
    ("1x1", (2, 6, 5, 5), 4, (1, 1), dict(), True),
    ("1x1_stride2", (2, 6, 7, 7), 8, (1, 1), dict(stride=2), False),
    ("7x7_stride2_pad3_stem", (1, 3, 16, 16), 8, (7, 7), dict(stride=2, padding=3), False),
    ("dilation2", (1, 4, 9, 10), 4, (3, 3), dict(padding=2, dilation=2), True),
    ("groups2", (2, 4, 6, 6), 6, (3, 3), dict(padding=1, groups=2), True),
    ("depthwise", (2, 4, 6, 7), 4, (3, 3), dict(padding=1, groups=4), True),
    ("depthwise_x2", (1, 4, 6, 5), 8, (3, 3), dict(stride=2, padding=1, groups=4), False),
    ("nonsquare", (1, 3, 8, 9), 4, (3, 1), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2)), True),
    ("nonsquare_kernel_2x5", (2, 2, 6, 9), 3, (2, 5), dict(stride=(1, 3), padding=(0, 2)), True),
    ("same_even_kernel", (1, 3, 6, 7), 4, (4, 2), dict(padding="same"), True),
    ("same_dilated", (1, 3, 6, 7), 4, (3, 3), dict(padding="same", dilation=(2, 1)), False),
    ("valid", (2, 3, 5, 5), 4, (3, 3), dict(padding="valid"), True),
    ("kernel_equals_input", (2, 3, 3, 4), 5, (3, 4), dict(), True),
    ("groups3_tuple_args", (1, 6, 7, 7), 6, (3, 3),
     dict(stride=(2, 2), padding=(1, 1), dilation=(1, 1), groups=3), True),
]
# The CPU's float32 fast paths. Winograd F(2x2, 3x3) (3x3, stride 1, >= 16 channels each way, >= 16
# output tiles) and its stride-2 form: odd channel counts (vector-lane and 6-row panel tails), output sizes that are not
# multiples of 2 (partial tiles), every padding it takes (0, 1, 2, uneven), tile rows crossing the
# product kernel's 16-column panels, and enough tiles for several blocks. The panel product
# (other one-group convolutions): strided, dilated, 1x1 and 7x7 with row and column tails. Groups
# keep BLAS. Larger filters over 16+ channels grow the values, so the inputs stay modest in size.
FAST = [
    ("winograd_tails", (2, 17, 13, 9), 19, (3, 3), dict(padding=1), True),
    ("winograd_nopad", (1, 16, 18, 23), 16, (3, 3), dict(), False),
    ("winograd_pad2_wide", (1, 16, 10, 30), 20, (3, 3), dict(padding=2), True),
    ("winograd_pad_uneven", (2, 18, 11, 14), 17, (3, 3), dict(padding=(0, 1)), True),
    ("winograd_blocks", (2, 16, 120, 118), 16, (3, 3), dict(padding=1), True),
    # Winograd at stride 2 (64+ channels each way, 128+ tiles, conv_winograd.cpp; on AMD's Zen 3 /
    # Zen 4 from 14-wide outputs, elsewhere from 56-wide, or 28-wide with 128+ channels, so
    # winograd_s2_wide takes it on every machine and the others where it pays): odd channel
    # counts and output sizes, no padding, uneven padding, blocks each thread runs alone (225 tiles)
    # and blocks whose stages the threads share (162), tile groups reading
    # past the left padding up to the group's last column (35 wide, padding 1).
    ("winograd_s2_tails", (2, 65, 33, 35), 67, (3, 3), dict(stride=2, padding=1), True),
    ("winograd_s2_nopad", (1, 64, 60, 62), 64, (3, 3), dict(stride=2), False),
    ("winograd_s2_pad_uneven", (2, 64, 30, 37), 70, (3, 3), dict(stride=2, padding=(2, 0)), True),
    ("winograd_s2_wide", (2, 64, 11, 115), 64, (3, 3), dict(stride=2, padding=1), True),
    ("panel_3x3_stride2", (2, 20, 11, 13), 13, (3, 3), dict(stride=2, padding=1), True),
    ("panel_dilated", (1, 16, 12, 12), 17, (3, 3), dict(padding=2, dilation=2), False),
    ("panel_1x1_stride2", (2, 24, 9, 9), 31, (1, 1), dict(stride=2), True),
    ("panel_7x7_stem", (2, 3, 37, 35), 20, (7, 7), dict(stride=2, padding=3), False),
    ("panel_few_tiles_3x3", (1, 32, 7, 7), 16, (3, 3), dict(padding=1), True),  # < 16 tiles: not Winograd
    ("groups_blas", (1, 32, 10, 10), 32, (3, 3), dict(padding=1, groups=2), True),
    # The direct path (24+ output channels, conv_direct.cpp; 1x1 only on AVX-512 and the baseline,
    # AVX2 gives 1x1 to the panel kernel: panel_1x1_stride2, direct_1x1 and direct_wrapped_1x1 take
    # one or the other): a stem (padded copy), unequal strides and paddings, dilation, stride 3 (the
    # kernel's generic pixel step), a 1x2 read in place whose rows split into unequal pixel blocks,
    # 5x5 and 3x3 stride 2 whose last block of output channels is partly past the end.
    ("direct_7x7_stem", (2, 3, 41, 39), 32, (7, 7), dict(stride=2, padding=3), True),
    ("direct_stride_2x1", (1, 4, 9, 30), 24, (3, 5), dict(stride=(2, 1), padding=(1, 2)), True),
    ("direct_dilated", (1, 5, 12, 20), 28, (3, 3), dict(padding=1, dilation=(1, 2)), False),
    ("direct_stride3", (2, 3, 8, 50), 26, (2, 4), dict(stride=3, padding=(0, 1)), True),
    ("direct_1x1", (1, 8, 3, 50), 50, (1, 1), dict(), False),
    ("direct_1x2", (1, 8, 3, 51), 50, (1, 2), dict(), False),
    ("direct_5x5", (1, 6, 7, 23), 48, (5, 5), dict(padding=2), True),
    ("direct_3x3_stride2", (2, 20, 11, 13), 50, (3, 3), dict(stride=2, padding=(0, 2)), True),
    # Output rows short enough to go two at a time (7 wide on AVX-512, 3 on AVX2), an odd last row.
    ("direct_two_rows", (2, 20, 13, 13), 40, (3, 3), dict(stride=2, padding=1), True),
    ("direct_two_rows_5x5", (1, 8, 11, 11), 32, (5, 5), dict(), False),
    ("direct_two_rows_narrow", (1, 16, 9, 6), 24, (3, 3), dict(stride=2), True),
    # Rows read as one run of pixels through a group of rows, blocks wrapping into the next row
    # (15 and 20 wide: 6-pixel blocks on AVX2, 14 on AVX-512), with a shorter last group.
    ("direct_wrapped_rows", (2, 12, 21, 30), 24, (3, 3), dict(stride=2, padding=1), True),
    ("direct_wrapped_1x1", (1, 8, 5, 20), 30, (1, 1), dict(), False),
    ("direct_wrapped_2x1", (1, 8, 6, 20), 30, (2, 1), dict(), False),  # read in place, 20 wide
    # One-row outputs 15 wide: a group of rows (one block of tasks) spans up to 14 images, each
    # padded into a slot of the thread's own (conv_direct.cpp's DirectImages).
    ("direct_images_per_block", (16, 8, 2, 30), 32, (3, 3), dict(stride=2, padding=1), True),
    # The batch's output rows stacked: 3 images of 7 rows, a call's second run the next image's
    # first row, the 21st row alone.
    ("direct_rows_across_images", (3, 16, 13, 13), 32, (3, 3), dict(stride=2, padding=1), True),
]


def _fast(*names):
    """The FAST rows of these ids."""
    rows = {c[0]: c for c in FAST}
    return [rows[n] for n in names]


def _run(combo, device, dtype, layout="contiguous", seed=0):
    _, xs, out_ch, (kh, kw), kwargs, has_bias = combo
    groups = kwargs.get("groups", 1)
    x = rand(xs, dtype, seed)
    w = rand((out_ch, xs[1] // groups, kh, kw), dtype, seed + 1)
    b = rand((out_ch,), dtype, seed + 2) if has_bias else None
    ours = F.conv2d(make(x, dtype, device, layout), make(w, dtype, device, layout),
                    None if b is None else make(b, dtype, device, layout), **kwargs)
    expected = torch_conv(x, w, b, **kwargs)
    assert ours.dtype == dtype and str(ours.device) == device
    assert tuple(ours.shape) == expected.shape
    rtol, atol = TOL[dtype]
    assert_close(ours, expected, rtol, atol, check_dtype=False)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("combo", COMBOS, ids=[c[0] for c in COMBOS])
def test_conv2d_matches_torch(combo, device):
    for dtype in dtypes_on(device, FLOATS):
        _run(combo, device, dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS[1:])
@pytest.mark.parametrize("combo", [COMBOS[0], COMBOS[2], COMBOS[7], COMBOS[9]], ids=lambda c: c[0])
def test_conv2d_layouts(combo, layout, device):
    for dtype in (bm.float32, bm.float16):
        _run(combo, device, dtype, layout)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("combo", FAST, ids=[c[0] for c in FAST])
def test_conv2d_fast_paths_match_torch(combo, device):
    _run(combo, device, bm.float32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS[1:])
@pytest.mark.parametrize("combo", _fast("winograd_tails", "winograd_pad_uneven", "winograd_s2_tails",
                                         "panel_3x3_stride2", "panel_1x1_stride2", "direct_7x7_stem",
                                         "direct_stride_2x1", "direct_rows_across_images", "winograd_s2_wide"),
                         ids=lambda c: c[0])
def test_conv2d_fast_paths_layouts(combo, layout, device):
    _run(combo, device, bm.float32, layout)


@pytest.mark.parametrize("combo", _fast("winograd_tails", "winograd_blocks", "winograd_s2_tails", "winograd_s2_nopad",
                                         "winograd_s2_wide"),
                         ids=lambda c: c[0])
def test_conv2d_winograd_thread_count(combo):
    """Winograd's bits do not depend on the thread count (docs/determinism.md). One thread runs
    whole blocks alone; with more, winograd_blocks and winograd_s2_nopad give each thread its own
    blocks too and winograd_tails and winograd_s2_tails share every stage of one block among the
    threads: all give the same sums."""
    _, xs, out_ch, (kh, kw), kwargs, _ = combo
    # float32 (rand gives float64 arrays): Winograd's own dtype; float64 goes to BLAS, whose bits
    # may change with the thread count (docs/determinism.md).
    x = bm.tensor(rand(xs, bm.float32, 0), dtype=bm.float32)
    w = bm.tensor(rand((out_ch, xs[1], kh, kw), bm.float32, 1), dtype=bm.float32)
    before = bm.get_num_threads()
    try:
        runs = []
        for n in (1, 2, 3):
            bm.set_num_threads(n)
            runs.append(F.conv2d(x, w, **kwargs).numpy())
    finally:
        bm.set_num_threads(before)
    for r in runs[1:]:
        assert (r == runs[0]).all()


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_fast_paths_filters_rewritten(device):
    """The CPU keeps rearranged filters between calls: writing new values into the same memory,
    through bessemer or through the NumPy array it shares, must give the new filters' result."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 16, 12, 12)).astype(np.float32)
    for shape, kw in (((16, 16, 3, 3), dict(padding=1)), ((16, 16, 3, 3), dict(stride=2))):
        w_np = rng.standard_normal(shape).astype(np.float32)
        w = bm.from_numpy(w_np) if device == "cpu" else bm.tensor(w_np, device=device)
        bx = bm.tensor(x, device=device)
        assert_close(F.conv2d(bx, w, **kw), torch_conv(x, w_np, None, **kw), 2e-5, 5e-5)
        w_np[...] *= -0.5  # bm.from_numpy shares this memory on the CPU
        if device != "cpu":
            w.copy_(bm.tensor(w_np, device=device))
        assert_close(F.conv2d(bx, w, **kw), torch_conv(x, w_np, None, **kw), 2e-5, 5e-5)
        w.mul_(3.0)
        assert_close(F.conv2d(bx, w, **kw), torch_conv(x, w.numpy(), None, **kw), 2e-5, 5e-5)
    # Large filters are compared with the kept copy in slices on the thread pool: one value changed
    # far past the first slice (65536 floats) must still be seen.
    x = rng.standard_normal((1, 128, 8, 8)).astype(np.float32)
    w_np = rng.standard_normal((128, 128, 3, 3)).astype(np.float32)
    w = bm.from_numpy(w_np) if device == "cpu" else bm.tensor(w_np, device=device)
    bx = bm.tensor(x, device=device)
    assert_close(F.conv2d(bx, w, padding=1), torch_conv(x, w_np, None, padding=1), 2e-5, 5e-5)
    w_np[120, 100, 2, 1] += 50.0
    if device != "cpu":
        w.copy_(bm.tensor(w_np, device=device))
    assert_close(F.conv2d(bx, w, padding=1), torch_conv(x, w_np, None, padding=1), 2e-5, 5e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_broadcast_input(device):
    """Zero strides: an input expanded from one pixel."""
    x = np.random.default_rng(3).standard_normal((2, 3, 1, 1)).astype(np.float32)
    w = np.random.default_rng(4).standard_normal((4, 3, 3, 3)).astype(np.float32)
    ours = F.conv2d(bm.tensor(x, device=device).expand(2, 3, 5, 6), bm.tensor(w, device=device), padding=1)
    assert_close(ours, torch_conv(np.broadcast_to(x, (2, 3, 5, 6)).copy(), w, None, padding=1), 2e-5, 5e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_pointwise_strided_inputs(device):
    """1x1 convolutions (the input read in place as a matrix where possible): zero channel strides,
    step-sliced channels, transposed pixels, an offset view."""
    rng = np.random.default_rng(11)
    base = rng.standard_normal((2, 8, 5, 6)).astype(np.float32)
    w = rng.standard_normal((5, 4, 1, 1)).astype(np.float32)
    bx = bm.tensor(base, device=device)
    views = [
        (bx[:1, :1].expand(2, 4, 5, 6), np.broadcast_to(base[:1, :1], (2, 4, 5, 6))),
        (bx[:, ::2], base[:, ::2]),
        (bx[:, 2:6].transpose(2, 3), base[:, 2:6].transpose(0, 1, 3, 2)),
        (bx[1:, 3:7], base[1:, 3:7]),
    ]
    for ours_x, np_x in views:
        got = F.conv2d(ours_x, bm.tensor(w, device=device))
        assert_close(got, torch_conv(np.ascontiguousarray(np_x), w, None), 2e-5, 5e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_unbatched(device):
    x, w, b = rand((3, 6, 5), bm.float32, 0), rand((4, 3, 3, 3), bm.float32, 1), rand((4,), bm.float32, 2)
    ours = F.conv2d(make(x, bm.float32, device), make(w, bm.float32, device), make(b, bm.float32, device), padding=1)
    assert tuple(ours.shape) == (4, 6, 5)
    assert_close(ours, torch_conv(x, w, b, padding=1), 2e-5, 5e-5, check_dtype=False)


@pytest.mark.parametrize("shape", [(8, 16, 6, 6), (3, 8, 9, 8)], ids=["many_small_images", "uneven_batches"])
def test_conv2d_cpu_images_batched_into_one_product(shape):
    """Small images are unfolded side by side into one product; results land in each image."""
    for layout in ("contiguous", "channels_last"):
        for dtype in (bm.float32, bm.bfloat16):
            x, w, b = rand(shape, dtype, 5), rand((12, shape[1], 3, 3), dtype, 6), rand((12,), dtype, 7)
            ours = F.conv2d(make(x, dtype, "cpu", layout), make(w, dtype, "cpu"), make(b, dtype, "cpu"), padding=1)
            assert_close(ours, torch_conv(x, w, b, padding=1), *TOL[dtype], check_dtype=False)


def test_conv2d_cpu_large_image_in_column_tiles():
    """An image whose unfolded columns exceed the column budget is done in tiles that start and
    end mid-row; 3x3 and 1x1 (input read in place) paths."""
    x = rand((1, 64, 90, 91), bm.float32, 8)
    for k, kw in ((3, dict(padding=1, stride=1)), (1, dict())):
        w, b = rand((8, 64, k, k), bm.float32, 9), rand((8,), bm.float32, 10)
        ours = F.conv2d(bm.tensor(x.astype(np.float32)), bm.tensor(w.astype(np.float32)),
                        bm.tensor(b.astype(np.float32)), **kw)
        assert_close(ours, torch_conv(x, w, b, **kw), 1e-4, 1e-4, check_dtype=False)


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_empty(device):
    """Empty outputs are empty; with no input channels or no input pixels every output is padding
    times weights, i.e. the bias (torch returns a 0-channel tensor or raises for these)."""
    def run(xs, ws, bias, out_shape, **kw):
        b = np.arange(1, ws[0] + 1, dtype=np.float32) if bias else None
        ours = F.conv2d(bm.zeros(*xs, device=device), bm.ones(*ws, device=device),
                        None if b is None else bm.tensor(b, device=device), **kw)
        assert tuple(ours.shape) == out_shape and str(ours.device) == device
        expected = np.zeros(out_shape, np.float32) + (0 if b is None else b[:, None, None])
        assert_close(ours, expected, 0, 0)

    run((0, 3, 5, 5), (4, 3, 3, 3), True, (0, 4, 3, 3))
    run((2, 3, 5, 5), (0, 3, 3, 3), False, (2, 0, 3, 3))
    run((2, 0, 5, 5), (4, 0, 3, 3), True, (2, 4, 3, 3))
    run((2, 0, 5, 5), (4, 0, 3, 3), False, (2, 4, 3, 3))
    run((1, 2, 0, 3), (3, 2, 1, 1), True, (1, 3, 2, 5), padding=1)
    run((0, 2, 4), (3, 0, 1, 2), True, (3, 1, 3), stride=(2, 1))  # unbatched


# ---- errors: devices first, then dtypes, then shapes ----

OTHER = [d for d in DEVICES if d != "cpu"]


@pytest.mark.parametrize("other", OTHER)
def test_conv2d_device_mismatch_first(other):
    x = bm.ones(1, 3, 5, 5, device="cpu")
    w = bm.ones(4, 3, 3, 3, device=other)
    b = bm.ones(4, device=other)
    msg = rf"\[conv2d\] inputs are on different devices: input on cpu, weight on {other}"
    with pytest.raises(bm.DeviceMismatchError, match=msg):
        F.conv2d(x, w)
    with pytest.raises(bm.DeviceMismatchError, match=rf"\[conv2d\] .*input on {other}, bias on cpu"):
        F.conv2d(w.to("cpu").to(other)[:1], w, bm.ones(4))  # shapes also bad: devices still first
    # bad dtypes, bad shapes and empty tensors: still the device error
    with pytest.raises(bm.DeviceMismatchError, match=msg):
        F.conv2d(bm.ones(1, 3, 5, 5, dtype=bm.int32), w)
    with pytest.raises(bm.DeviceMismatchError, match=msg):
        F.conv2d(bm.ones(7, device="cpu"), bm.ones(2, 2, dtype=bm.int64, device=other))
    with pytest.raises(bm.DeviceMismatchError, match=msg):
        F.conv2d(bm.ones(0, 3, 5, 5), bm.ones(0, 3, 3, 3, device=other))
    with pytest.raises(bm.DeviceMismatchError, match=rf"input on cpu, bias on {other}"):
        F.conv2d(x, bm.ones(4, 3, 3, 3), b)
    with pytest.raises(bm.DeviceMismatchError):  # also through the layer
        bm.nn.Conv2d(3, 4, 3, device=other)(x)


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_dtype_errors(device):
    x, w = bm.ones(1, 3, 5, 5, device=device), bm.ones(4, 3, 3, 3, device=device)
    with pytest.raises(bm.UnsupportedError, match=r"\[conv2d\] dtype int32 is not supported"):
        F.conv2d(x.to(bm.int32), w.to(bm.int32))
    with pytest.raises(TypeError, match=r"\[conv2d\] input, weight and bias must have the same dtype"):
        F.conv2d(x, w.to(bm.float16))
    with pytest.raises(TypeError, match=r"bias float16"):
        F.conv2d(x, w, bm.ones(4, dtype=bm.float16, device=device))
    with pytest.raises(bm.UnsupportedError, match=r"\[conv2d\] dtype int64"):  # dtype before shape
        F.conv2d(bm.ones(2, dtype=bm.int64, device=device), bm.ones(3, dtype=bm.int64, device=device))


SHAPE_ERRORS = [
    ("input_ndim", (3, 5), (4, 3, 3, 3), None, {}, r"expected a 3-D \(unbatched\) or 4-D \(batched\) input"),
    ("weight_ndim", (1, 3, 5, 5), (4, 3, 3), None, {}, r"weight must be 4-D"),
    ("channels", (1, 5, 5, 5), (4, 3, 3, 3), None, {}, r"to have 3 channels, but it has 5"),
    ("groups_out", (1, 4, 5, 5), (5, 2, 3, 3), None, dict(groups=2), r"out_channels .* divisible by groups \(2\)"),
    ("groups_in", (1, 5, 5, 5), (4, 2, 3, 3), None, dict(groups=2), r"given groups=2 .* to have 4 channels"),
    ("groups_zero", (1, 3, 5, 5), (4, 3, 3, 3), None, dict(groups=0), r"groups must be positive"),
    ("bias_shape", (1, 3, 5, 5), (4, 3, 3, 3), (3,), {}, r"bias must have shape \(4,\)"),
    ("kernel_too_big", (1, 3, 2, 8), (4, 3, 3, 3), None, {}, r"padded input \(2, 8\) is smaller than the .*kernel"),
    ("dilated_too_big", (1, 3, 5, 5), (4, 3, 3, 3), None, dict(dilation=3), r"kernel \(7, 7\)"),
    ("stride_zero", (1, 3, 5, 5), (4, 3, 3, 3), None, dict(stride=0), r"stride must be positive"),
    ("stride_negative", (1, 3, 5, 5), (4, 3, 3, 3), None, dict(stride=(1, -1)), r"stride must be positive"),
    ("dilation_zero", (1, 3, 5, 5), (4, 3, 3, 3), None, dict(dilation=0), r"dilation must be positive"),
    ("padding_negative", (1, 3, 5, 5), (4, 3, 3, 3), None, dict(padding=-1), r"padding must be non-negative"),
    ("padding_string", (1, 3, 5, 5), (4, 3, 3, 3), None, dict(padding="full"), r"padding must be 'same', 'valid'"),
    ("same_strided", (1, 3, 5, 5), (4, 3, 3, 3), None, dict(padding="same", stride=2), r"not supported for strided"),
    ("pair_length", (1, 3, 5, 5), (4, 3, 3, 3), None, dict(stride=(1, 2, 3)), r"stride must be an int or a pair"),
    ("zero_kernel", (1, 3, 5, 5), (4, 3, 0, 3), None, {}, r"kernel size must be positive"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", SHAPE_ERRORS, ids=[c[0] for c in SHAPE_ERRORS])
def test_conv2d_shape_errors(case, device):
    _, xs, ws, bs, kw, msg = case
    b = None if bs is None else bm.ones(*bs, device=device)
    with pytest.raises(ValueError, match=r"\[conv2d\] .*" + msg):
        F.conv2d(bm.ones(*xs, device=device), bm.ones(*ws, device=device), b, **kw)


# ---- nn.Conv2d ----

def _copy_from_torch(ours: bm.nn.Conv2d, theirs: torch.nn.Conv2d) -> None:
    ours.load_state_dict({k: bm.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kwargs", [dict(kernel_size=3, padding=1), dict(kernel_size=(7, 7), stride=2, padding=3,
                                                                        bias=False),
                                    dict(kernel_size=3, groups=2, dilation=2, padding="same")],
                         ids=["3x3", "stem", "grouped_same"])
def test_conv2d_layer_matches_torch(kwargs, device):
    torch.manual_seed(0)
    theirs = torch.nn.Conv2d(4, 6, **kwargs)
    ours = bm.nn.Conv2d(4, 6, **kwargs, device=device)
    assert list(ours.state_dict().keys()) == list(theirs.state_dict().keys())
    for k, v in theirs.state_dict().items():
        assert tuple(ours.state_dict()[k].shape) == tuple(v.shape)
    _copy_from_torch(ours, theirs)
    x = np.random.default_rng(0).standard_normal((2, 4, 11, 10)).astype(np.float32)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x)).numpy()
    got = ours(bm.tensor(x, device=device))
    assert str(got.device) == device
    assert_close(got, expected, 1e-5, 1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_conv2d_layer_init_and_attributes(device):
    m = bm.nn.Conv2d(6, 8, (3, 5), stride=2, groups=2, device=device, dtype=bm.float16)
    assert m.weight.dtype == bm.float16 and str(m.weight.device) == device
    assert tuple(m.weight.shape) == (8, 3, 3, 5) and tuple(m.bias.shape) == (8,)
    assert m.kernel_size == (3, 5) and m.stride == (2, 2) and m.padding == (0, 0) and m.dilation == (1, 1)
    assert m.groups == 2 and m.padding_mode == "zeros"
    bound = 1 / math.sqrt(3 * 3 * 5)  # kaiming_uniform_(a=sqrt(5)) and the bias: both 1/sqrt(fan_in)
    w, b = m.weight.to(bm.float32).numpy(), m.bias.to(bm.float32).numpy()
    assert np.abs(w).max() <= bound * 1.001 and np.abs(w).max() > 0.8 * bound
    assert np.abs(b).max() <= bound * 1.001 and np.unique(b).size > 1
    m2 = bm.nn.Conv2d(6, 8, (3, 5), stride=2, groups=2, device=device, dtype=bm.float16)
    assert not np.array_equal(w, m2.weight.to(bm.float32).numpy())
    assert "Conv2d(6, 8, kernel_size=(3, 5), stride=(2, 2), groups=2)" in repr(m)
    assert "bias=False" in repr(bm.nn.Conv2d(1, 1, 1, bias=False, device=device))
    assert bm.nn.Conv2d(1, 1, 1, bias=False, device=device).bias is None


def test_conv2d_layer_argument_errors():
    with pytest.raises(ValueError, match=r"in_channels \(3\) must be divisible by groups \(2\)"):
        bm.nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match=r"out_channels \(3\) must be divisible by groups \(2\)"):
        bm.nn.Conv2d(4, 3, 3, groups=2)
    with pytest.raises(ValueError, match="groups must be a positive integer"):
        bm.nn.Conv2d(4, 4, 3, groups=0)
    with pytest.raises(bm.UnsupportedError, match="padding_mode='reflect' is not supported"):
        bm.nn.Conv2d(4, 4, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="padding_mode must be 'zeros'"):
        bm.nn.Conv2d(4, 4, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        bm.nn.Conv2d(4, 4, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding must be 'valid', 'same'"):
        bm.nn.Conv2d(4, 4, 3, padding="full")
