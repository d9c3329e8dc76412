"""index_select, index_add, index_copy_ and nonzero against torch CPU on every device, for every
layout of the input and of the index, int32/int64 indices and every dtype; index_add's determinism
(cpu and metal-sim give the same bits with many duplicates); and their errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_indexing import IDX_LAYOUTS, TORCH, X_LAYOUTS, check, make_index

import bessemer as bm
from harness import DEVICES, dtypes_on, make_input

ALL = [bm.float32, bm.float16, bm.bfloat16, bm.float64, bm.int32, bm.int64, bm.bool]


def make_x(shape, layout, device, dtype, seed=0):
    t, vals = make_input(shape, dtype, device, layout, np.random.default_rng(seed))
    return t, torch.tensor(np.array(vals)).to(TORCH[dtype])


def as_torch(t):
    return torch.tensor(t.to(bm.float32).numpy()).to(TORCH[t.dtype]) if t.dtype == bm.bfloat16 else \
        torch.tensor(t.numpy())


# ---------------------------------------------------------------- index_select

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("x_layout", X_LAYOUTS)
@pytest.mark.parametrize("i_layout", IDX_LAYOUTS)
@pytest.mark.parametrize("idtype", [bm.int32, bm.int64])
def test_index_select_layouts(device, x_layout, i_layout, idtype):
    t, ref = make_x((3, 4, 5), x_layout, device, bm.float32)
    for dim in (0, 1, -1):
        i, ri = make_index([2, 0, 2, 1], i_layout, device, idtype)
        want = torch.index_select(ref, dim, ri.long().reshape(-1))  # a 0-d index selects one row too
        check(bm.index_select(t, dim, i), want)
        check(t.index_select(dim, i), want)


@pytest.mark.parametrize("device", DEVICES)
def test_index_select_dtypes_and_shapes(device):
    for dtype in dtypes_on(device, ALL):
        t, ref = make_x((4, 3), "transposed", device, dtype, seed=1)
        i = bm.tensor([3, 3, 0], device=device)
        check(bm.index_select(t, 0, i), torch.index_select(ref, 0, torch.tensor([3, 3, 0])))
        check(bm.index_select(t, 1, bm.tensor([], dtype=bm.int64, device=device)), ref[:, :0])
    # 0-d input: one index, 0-d result (torch)
    check(bm.index_select(bm.tensor(2.5, device=device), 0, bm.tensor([0], device=device)), torch.tensor(2.5))
    z = bm.zeros(0, 3, device=device)
    check(bm.index_select(z, 1, bm.tensor([2, 0], device=device)), torch.zeros(0, 2))


# ---------------------------------------------------------------- index_add

def _index_add_ref(base, dim, idx, src):
    """torch's index_add (bool: logical or, which torch does not implement)."""
    if base.dtype == torch.bool:
        out = base.clone().moveaxis(dim, 0)
        s = src.moveaxis(dim, 0)
        for k, i in enumerate(idx.tolist()):
            out[i] |= s[k]
        return out.moveaxis(0, dim)
    return base.index_add(dim, idx.long(), src)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("x_layout", X_LAYOUTS)
@pytest.mark.parametrize("i_layout", ["contiguous", "transposed", "sliced", "offset", "broadcast"])
@pytest.mark.parametrize("idtype", [bm.int32, bm.int64])
def test_index_add_layouts(device, x_layout, i_layout, idtype):
    base, rbase = make_x((4, 3, 5), x_layout, device, bm.float32)
    for dim in (0, 1, 2):
        n = 6
        i, ri = make_index(np.array([0, 2, 0, 1, 2, 0]) % base.shape[dim], i_layout, device, idtype)
        shape = list(base.shape)
        shape[dim] = n
        src, rsrc = make_x(tuple(shape), x_layout if x_layout != "broadcast" else "sliced", device, bm.float32, seed=2)
        got = bm.index_add(base, dim, i, src)
        want = _index_add_ref(rbase, dim, ri, rsrc)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
        assert got.numpy().tobytes() == bm.index_add(base.to("cpu"), dim, i.to("cpu"), src.to("cpu")).numpy().tobytes()


@pytest.mark.parametrize("device", DEVICES)
def test_index_add_dtypes(device):
    for dtype in dtypes_on(device, ALL):
        base, rbase = make_x((5, 3), "offset", device, dtype)
        src, rsrc = make_x((4, 3), "transposed", device, dtype, seed=3)
        idx = torch.tensor([4, 0, 4, 4])
        got = bm.index_add(base, 0, bm.tensor(idx.numpy(), device=device), src)
        want = _index_add_ref(rbase, 0, idx, rsrc)
        assert got.dtype == dtype
        if dtype in (bm.float16, bm.bfloat16):
            # we add in float32 and round once; torch rounds after each add
            want = _index_add_ref(rbase.float(), 0, idx, rsrc.float()).to(TORCH[dtype])
        np.testing.assert_allclose(got.to(bm.float32).numpy() if dtype == bm.bfloat16 else got.numpy(),
                                   want.float().numpy() if dtype == bm.bfloat16 else want.numpy(), rtol=1e-2)
    # method, alpha, in place, 0-d
    b = bm.zeros(3, device=device)
    s = bm.tensor([1.0, 2.0], device=device)
    assert b.index_add(0, bm.tensor([2, 2], device=device), s, alpha=2).tolist() == [0.0, 0.0, 6.0]
    b.index_add_(0, bm.tensor([1, 0], device=device), s)
    assert b.tolist() == [2.0, 1.0, 0.0]
    assert bm.index_add(bm.tensor(1.0, device=device), 0, bm.tensor([0, 0], device=device),
                        bm.tensor([1.0, 2.0], device=device)).tolist() == 4.0


def test_index_add_is_deterministic_and_the_same_on_every_device():
    """Many duplicates in float16/float32: each output sums its contributions in index order, so
    runs and devices agree bit for bit (no atomics)."""
    rng = np.random.default_rng(5)
    idx = rng.integers(0, 7, 400)
    for dtype in (bm.float32, bm.float16, bm.bfloat16):
        base = rng.standard_normal((7, 33)).astype(np.float32)
        src = rng.standard_normal((400, 33)).astype(np.float32)
        outs = []
        for device in DEVICES:
            b = bm.tensor(base, device=device).to(dtype)
            s = bm.tensor(src, device=device).to(dtype)
            i = bm.tensor(idx, device=device)
            for _ in range(2):
                outs.append(bm.index_add(b, 0, i, s).to(bm.float32).numpy().tobytes())
            # also as the gradient formulation of a transposed layout
            outs.append(bm.index_add(b.T.contiguous().T, 0, i, s).to(bm.float32).numpy().tobytes())
        assert len(set(outs)) == 1, dtype


# ---------------------------------------------------------------- index_copy_

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("x_layout", ["contiguous", "transposed", "sliced", "offset"])
@pytest.mark.parametrize("i_layout", ["contiguous", "transposed", "sliced", "offset", "0d"])
@pytest.mark.parametrize("idtype", [bm.int32, bm.int64])
def test_index_copy_layouts(device, x_layout, i_layout, idtype):
    for dim in (0, 1, -1):
        t, ref = make_x((4, 4, 5), x_layout, device, bm.float32)
        i, ri = make_index([3, 0, 2], i_layout, device, idtype)
        shape = list(t.shape)
        shape[dim] = i.numel()
        src, rsrc = make_x(tuple(shape), "transposed", device, bm.float32, seed=4)
        assert t.index_copy_(dim, i, src) is t
        ref.index_copy_(dim, ri.long().reshape(-1), rsrc)
        check(t, ref)


@pytest.mark.parametrize("device", DEVICES)
def test_index_copy_dtypes_duplicates_and_out_of_place(device):
    for dtype in dtypes_on(device, ALL):
        t, ref = make_x((4, 2), "contiguous", device, dtype)
        src, rsrc = make_x((3, 2), "sliced", device, dtype, seed=6)
        got = bm.index_copy(t, 0, bm.tensor([1, 3, 1], device=device), src)  # duplicate: the last wins
        want = ref.clone()
        want[3] = rsrc[1]
        want[1] = rsrc[2]
        check(got, want)
        check(t, ref)  # out of place left t alone


# ---------------------------------------------------------------- nonzero

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "offset", "broadcast", "0d", "empty"])
def test_nonzero_layouts_and_dtypes(device, layout):
    for dtype in dtypes_on(device, ALL):
        t, ref = make_x((3, 4, 2), layout, device, dtype, seed=7)
        if dtype not in (bm.bool,):
            t = bm.where(bm.abs(t) > 1, t, bm.zeros((), dtype=dtype, device=device))
            ref = torch.where(ref.abs() > 1, ref, torch.zeros((), dtype=TORCH[dtype]))
        got = bm.nonzero(t)
        assert got.dtype == bm.int64
        check(got, torch.nonzero(ref))
        check(t.nonzero(), torch.nonzero(ref))
        for g, w in zip(bm.nonzero(t, as_tuple=True), torch.nonzero(ref, as_tuple=True), strict=True):
            check(g, w)


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_values_and_many_dims(device):
    v = np.array([0.0, -0.0, np.nan, np.inf, 1e-30, 0.0], np.float32)
    check(bm.nonzero(bm.tensor(v, device=device)), torch.nonzero(torch.tensor(v)))
    big = np.random.default_rng(8).random(3000) < 0.1  # several chunks on Metal
    check(bm.nonzero(bm.tensor(big, device=device)), torch.nonzero(torch.tensor(big)))
    nine = (np.arange(2**9).reshape((2,) * 9) % 5 == 0)  # more dims than the kernels take
    check(bm.nonzero(bm.tensor(nine, device=device)), torch.nonzero(torch.tensor(nine)))
    check(bm.nonzero(bm.zeros((2,) * 9, device=device)), torch.nonzero(torch.zeros((2,) * 9)))


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("device", DEVICES)
def test_index_op_errors(device):
    x = bm.zeros(3, 4, device=device)
    i = bm.tensor([0, 1], device=device)
    cases = [
        (lambda: bm.index_select(x, 0, bm.tensor([0.0], device=device)), IndexError,
         r"\[index_select\] expected an int32 or int64 index, got float32"),
        (lambda: bm.index_select(x, 0, bm.tensor([[0]], device=device)), IndexError,
         r"\[index_select\] index must be a 0-d or 1-D tensor"),
        (lambda: bm.index_select(x, 0, bm.tensor([3], device=device)), IndexError,
         r"\[index_select\] index 3 is out of range for dimension 0 with size 3"),
        (lambda: bm.index_select(x, 1, bm.tensor([-1], device=device)), IndexError,
         r"\[index_select\] index -1 is out of range for dimension 1 with size 4"),
        (lambda: bm.index_select(x, 2, i), IndexError, r"\[index_select\]"),
        (lambda: bm.index_select(bm.tensor(1.0, device=device), 0, i), ValueError,
         r"\[index_select\] an index into a 0-d tensor must have exactly 1 value"),
        (lambda: bm.index_add(x, 0, i, bm.ones(2, 4, dtype=bm.float16, device=device)), TypeError,
         r"\[index_add\] self \(float32\) and source \(float16\) must have the same dtype"),
        (lambda: bm.index_add(x, 0, i, bm.ones(3, 4, device=device)), ValueError,
         r"\[index_add\] source of shape \(3, 4\) does not match self of shape \(3, 4\) with 2 indices"),
        (lambda: bm.index_add(x, 1, bm.tensor([4], device=device), bm.ones(3, 1, device=device)), IndexError,
         r"\[index_add\] index 4 is out of range for dimension 1 with size 4"),
        (lambda: x.index_copy_(0, bm.tensor([5, 0], device=device), bm.ones(2, 4, device=device)), IndexError,
         r"\[index_copy\] index 5 is out of range"),
        (lambda: x.index_copy_(0, i, bm.ones(2, 4, dtype=bm.int32, device=device)), TypeError,
         r"\[index_copy\] self \(float32\) and source \(int32\) must have the same dtype"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()
    assert not x.any().item()  # nothing was written
    others = [d for d in DEVICES if d != "cpu"]
    if device != "cpu":
        with pytest.raises(bm.DeviceMismatchError, match=r"\[index_select\] inputs are on different devices"):
            bm.index_select(x, 0, bm.tensor([0]))
        with pytest.raises(bm.DeviceMismatchError, match=r"\[index_add\] inputs are on different devices"):
            bm.index_add(x, 0, i, bm.ones(2, 4))
    else:
        assert others
