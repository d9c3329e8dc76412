"""floor_divide (//), remainder (%), any and all against torch CPU on every device: signs, zeros,
infinities, NaN, integer edge cases, Python numbers on either side, layouts and dtypes; integer
division by zero; cpu and metal-sim agreeing bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_indexing import TORCH, check

import bessemer as bm
from harness import DEVICES, dtypes_on, make_input

FLOATS = [bm.float32, bm.float16, bm.bfloat16, bm.float64]
INTS = [bm.int32, bm.int64]
LAYOUTS = ["contiguous", "transposed", "sliced", "offset", "broadcast", "0d", "empty"]


def pair(device, dtype, a, b):
    ta, tb = torch.tensor(a).to(TORCH[dtype]), torch.tensor(b).to(TORCH[dtype])
    if dtype == bm.bfloat16:
        return bm.tensor(ta.float().numpy(), device=device).to(dtype), \
            bm.tensor(tb.float().numpy(), device=device).to(dtype), ta, tb
    return bm.tensor(ta.numpy(), device=device), bm.tensor(tb.numpy(), device=device), ta, tb


def check_close_nan(got, want):
    g = got.to(bm.float32).numpy() if got.dtype == bm.bfloat16 else got.numpy()
    w = (want.float() if want.dtype == torch.bfloat16 else want).numpy()
    assert g.shape == w.shape
    num = ~np.isnan(w)
    np.testing.assert_array_equal(np.signbit(g[num]), np.signbit(w[num]))  # -0.0 as torch (NaN signs aside)
    np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("device", DEVICES)
def test_float_special_values(device):
    a = [-7.0, 7.0, -7.0, 7.0, 0.0, -0.0, 5.0, -5.0, 0.0, np.inf, -np.inf, np.nan, 3.0, 1e-3, -1e-3, 5.5, -5.5]
    b = [2.0, -2.0, -2.0, 2.0, -3.0, 3.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, np.inf, -np.inf, np.inf, 0.5, -0.25]
    for dtype in dtypes_on(device, FLOATS):
        x, y, tx, ty = pair(device, dtype, a, b)
        assert (x // y).dtype == dtype
        check_close_nan(x // y, tx // ty)
        check_close_nan(x % y, tx % ty)
        check_close_nan(bm.floor_divide(x, y), torch.floor_divide(tx, ty))
        check_close_nan(bm.remainder(x, y), torch.remainder(tx, ty))


@pytest.mark.parametrize("device", DEVICES)
def test_integer_signs_and_edges(device):
    for dtype, lo in ((bm.int32, -(2**31)), (bm.int64, -(2**63))):
        a = [-7, 7, -7, 7, 0, 6, -6, lo, lo, lo, -lo - 1, 1, -1]
        b = [2, -2, -2, 2, -3, 3, -3, -1, 1, 7, -1, lo, lo]
        x, y, tx, ty = pair(device, dtype, a, b)
        check(x // y, tx // ty)  # lo // -1 wraps to lo, as torch
        check(x % y, tx % ty)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_layouts_and_dtypes_against_torch(device, layout):
    rng = np.random.default_rng(0)
    for dtype in dtypes_on(device, FLOATS + INTS):
        x, vx = make_input((3, 4), dtype, device, layout, rng)
        ylayout = layout if layout in ("0d", "empty") else "transposed"
        y, vy = make_input((3, 4), dtype, device, ylayout, rng, "small")
        if dtype in INTS:
            y = bm.where(y == 0, 3, y)
            vy = np.where(vy == 0, 3, vy)
        tx, ty = torch.tensor(np.array(vx)).to(TORCH[dtype]), torch.tensor(np.array(vy)).to(TORCH[dtype])
        if dtype in (bm.float16, bm.bfloat16):  # we compute in float32 and round once
            check(x // y, (tx.float() // ty.float()).to(TORCH[dtype]))
            check(x % y, (tx.float() % ty.float()).to(TORCH[dtype]))
        else:
            check(x // y, tx // ty)
            check(x % y, tx % ty)


@pytest.mark.parametrize("device", DEVICES)
def test_python_numbers_and_promotion(device):
    x = bm.tensor([-7, -1, 0, 5, 9], device=device)
    tx = torch.tensor([-7, -1, 0, 5, 9])
    check(x // 2, tx // 2)
    check(x % 3, tx % 3)
    check(x // -4, tx // -4)
    check(x % -4, tx % -4)
    check(x // 2.5, tx // 2.5)  # int tensor // float number: float32
    check(x % 2.5, tx % 2.5)
    check(x // 0.0, tx // 0.0)  # a float division: inf/nan, no error
    nz = bm.tensor([3, -2, 1, 4, -5], device=device)
    tnz = torch.tensor([3, -2, 1, 4, -5])
    check(17 // nz, 17 // tnz)
    check(-17 % nz, -17 % tnz)
    check(7.5 // nz, 7.5 // tnz)
    check(x.floor_divide(nz), tx.floor_divide(tnz))
    check(x.remainder(nz), tx.remainder(tnz))
    i32 = bm.tensor([7, -7], dtype=bm.int32, device=device)
    assert (i32 // bm.tensor(2, device=device)).dtype == bm.int32  # a 0-d tensor does not promote
    assert (i32 // bm.tensor([2, 2], device=device)).dtype == bm.int64
    f = bm.tensor([5.0, -5.0], dtype=bm.float16, device=device)
    assert (f // 2).dtype == bm.float16 and (f % 2).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("device", DEVICES)
def test_integer_division_by_zero_raises(device):
    for dtype in INTS:
        x = bm.tensor([4, 5, 6], dtype=dtype, device=device)
        zero_in = bm.tensor([1, 0, 2], dtype=dtype, device=device)
        for fn, name in ((bm.floor_divide, "floor_divide"), (bm.remainder, "remainder")):
            msg = rf"\[{name}\] integer division by zero"
            with pytest.raises(ZeroDivisionError, match=msg):
                fn(x, 0)
            with pytest.raises(ZeroDivisionError, match=msg):
                fn(x, zero_in)
            with pytest.raises(ZeroDivisionError, match=msg):
                fn(7, zero_in)
            with pytest.raises(ZeroDivisionError, match=msg):
                fn(x, bm.zeros((), dtype=dtype, device=device).expand(3))
        with pytest.raises(ZeroDivisionError, match=r"\[floor_divide\]"):
            x // 0
        with pytest.raises(ZeroDivisionError, match=r"\[remainder\]"):
            x % zero_in
        with pytest.raises(ZeroDivisionError, match=r"\[floor_divide\]"):
            5 // zero_in
        with pytest.raises(ZeroDivisionError, match=r"\[remainder\]"):
            x % False


@pytest.mark.parametrize("device", DEVICES)
def test_floor_divide_errors(device):
    b = bm.tensor([True, False], device=device)
    with pytest.raises(bm.UnsupportedError, match=r"\[floor_divide\] dtype bool is not supported"):
        b // b
    with pytest.raises(bm.UnsupportedError, match=r"\[remainder\] dtype bool is not supported"):
        b % b
    with pytest.raises(TypeError, match=r"\[floor_divide\] expected a Tensor or a number"):
        bm.floor_divide(b, "x")
    if device != "cpu":
        with pytest.raises(bm.DeviceMismatchError, match=r"\[remainder\] inputs are on different devices"):
            bm.remainder(bm.ones(2, device=device), bm.ones(2))


def test_floor_divide_remainder_same_bits_on_every_device():
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(4000) * 100).astype(np.float32)
    b = (rng.standard_normal(4000) * 3).astype(np.float32)
    outs = {(op, d): getattr(bm, op)(bm.tensor(a, device=d), bm.tensor(b, device=d)).numpy().tobytes()
            for op in ("floor_divide", "remainder") for d in DEVICES}
    for op in ("floor_divide", "remainder"):
        assert len({outs[(op, d)] for d in DEVICES}) == 1
        want = getattr(torch, op)(torch.tensor(a), torch.tensor(b)).numpy()
        np.testing.assert_array_equal(np.frombuffer(outs[(op, "cpu")], np.float32), want)


# ---------------------------------------------------------------- any / all

DIMS = [None, 0, 1, -1, (0, 2), (-1, 0, 1), ()]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "offset", "broadcast"])
def test_any_all_against_torch(device, layout):
    rng = np.random.default_rng(2)
    for dtype in dtypes_on(device, FLOATS + INTS + [bm.bool]):
        x, v = make_input((3, 4, 5), dtype, device, layout, rng)
        if dtype != bm.bool:  # plenty of zeros, so neither answer is trivial
            x = bm.where(bm.abs(x) < 1, bm.zeros((), dtype=dtype, device=device), x)
            v = np.where(np.abs(v) < 1, 0, v)
        t = torch.tensor(np.array(v)).to(TORCH[dtype])
        for dim in DIMS:
            for keep in (False, True):
                tdim = tuple(range(3)) if dim in (None, ()) else dim
                for fn, tfn in ((bm.any, torch.any), (bm.all, torch.all)):
                    got = fn(x, dim, keep)
                    assert got.dtype == bm.bool
                    check(got, tfn(t, dim=tdim, keepdim=keep))
                check(x.any(dim, keep), torch.any(t, dim=tdim, keepdim=keep))
                check(x.all(dim=dim, keepdim=keep), torch.all(t, dim=tdim, keepdim=keep))


@pytest.mark.parametrize("device", DEVICES)
def test_any_all_special_cases(device):
    for dtype in dtypes_on(device, FLOATS):
        nan = bm.tensor([0.0, float("nan")], device=device).to(dtype)
        assert bm.any(nan).item() and not bm.all(nan).item()
        assert bm.all(bm.tensor([-0.0, 1.0], device=device).to(dtype), 0).item() is False
    for shape, dim in (((0,), None), ((2, 0), 1), ((0, 3), 0), ((0, 3), None)):
        z = bm.zeros(*shape, device=device)
        kw = {} if dim is None else {"dim": dim}
        check(bm.any(z, dim), torch.any(torch.zeros(shape), **kw))
        check(bm.all(z, dim), torch.all(torch.zeros(shape), **kw))
    s = bm.tensor(3, device=device)
    assert bm.any(s).item() and bm.all(s, 0).item() and bm.any(s, -1, True).shape == ()
    big = bm.zeros(70000, dtype=bm.bool, device=device)  # long reductions take the split path on Metal
    assert not big.any().item() and not big.all().item()
    big[69999] = True
    assert big.any().item()
    with pytest.raises(IndexError, match=r"\[any\]"):
        bm.any(bm.zeros(2, 3, device=device), 2)
    with pytest.raises(IndexError, match=r"\[all\]"):
        bm.all(bm.zeros(0, device=device), 1)
    with pytest.raises(ValueError, match=r"\[all\] dim -2 appears more than once"):
        bm.all(bm.zeros(2, 3, device=device), (0, -2))
    t = bm.tensor([[1, 0], [1, 1]], device=device)
    assert bool(t.all(1).any()) and not bool(t.all())
