"""Property tests: random index expressions (ints, slices with steps, None, Ellipsis, integer
arrays, bool masks, several advanced indices) on random small tensors, read and written, against
NumPy (where its rules are torch's) and against torch, on every device."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import bessemer as bm
from harness import DEVICES


@st.composite
def index_expr(draw, shape, ints_with_advanced: bool):
    """(numpy-style index tuple, whether it has advanced indices). Items consume dims left to right;
    an Ellipsis makes the items after it consume the last dims; Nones go anywhere."""
    nd = len(shape)
    k = draw(st.integers(0, nd))
    ell = draw(st.none() | st.integers(0, k))
    dims = list(range(k)) if ell is None else list(range(ell)) + list(range(nd - (k - ell), nd))
    kinds = ["int", "slice", "array", "mask"]
    items, advanced = [], False
    for d in dims:
        size = shape[d]
        kind = draw(st.sampled_from(kinds if size > 0 else ["slice", "array", "mask"]))
        if kind == "int":
            items.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            lo = st.none() | st.integers(-size - 1, size + 1)
            items.append(slice(draw(lo), draw(lo), draw(st.none() | st.integers(1, 3))))
        elif kind == "array":
            n = draw(st.integers(0, 3)) if size > 0 else 0
            items.append(np.array(draw(st.lists(st.integers(-size, size - 1), min_size=n, max_size=n)), dtype=np.int64)
                         if size > 0 else np.zeros(0, np.int64))
            advanced = True
        else:
            items.append(np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)), dtype=bool))
            advanced = True
    if ell is not None:
        items.insert(ell, Ellipsis)
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    arrays = [it for it in items if isinstance(it, np.ndarray) and it.dtype != bool]
    # advanced indices must broadcast together: give all int arrays one length (masks: their count)
    masks = [it for it in items if isinstance(it, np.ndarray) and it.dtype == bool]
    lengths = {len(a) for a in arrays} | {int(m.sum()) for m in masks}
    if len(lengths - {1}) > 1:
        return None
    if advanced and not ints_with_advanced and any(isinstance(it, int) for it in items):
        return None
    # An Ellipsis between two advanced indices: when it spans no dim, NumPy still counts the
    # indices as separated (their dims go first) and torch does not; the rules differ there.
    adv_at = [i for i, it in enumerate(items) if isinstance(it, np.ndarray)]
    ell_at = [i for i, it in enumerate(items) if it is Ellipsis]
    if ell_at and adv_at and adv_at[0] < ell_at[0] < adv_at[-1]:
        return None
    return tuple(items)


def to_bm(idx, device, idtype):
    return tuple(bm.tensor(it, dtype=None if it.dtype == bool else idtype, device=device)
                 if isinstance(it, np.ndarray) else it for it in idx)


def to_torch(idx):
    return tuple(torch.tensor(it) if isinstance(it, np.ndarray) else it for it in idx)


@st.composite
def case(draw, ints_with_advanced):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)))
    idx = draw(index_expr(shape, ints_with_advanced))
    layout = draw(st.sampled_from(["contiguous", "transposed", "sliced"]))
    return shape, idx, layout, draw(st.sampled_from([bm.int32, bm.int64]))


def make(shape, layout, device):
    vals = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    if layout == "transposed":
        t = bm.tensor(np.ascontiguousarray(vals.T), device=device).permute(*reversed(range(len(shape))))
    elif layout == "sliced":
        big = np.zeros(tuple(2 * s for s in shape), np.float32)
        big[tuple(slice(None, None, 2) for _ in shape)] = vals
        t = bm.tensor(big, device=device)[tuple(slice(None, None, 2) for _ in shape)]
    else:
        t = bm.tensor(vals, device=device)
    return t, vals


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=80, deadline=None)
@given(c=case(ints_with_advanced=False))
def test_getitem_matches_numpy(device, c):
    shape, idx, layout, idtype = c
    if idx is None:
        return
    t, vals = make(shape, layout, device)
    want = vals[idx]
    got = t[to_bm(idx, device, idtype)]
    assert tuple(got.shape) == want.shape, (idx, got.shape, want.shape)
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=80, deadline=None)
@given(c=case(ints_with_advanced=True), value=st.sampled_from(["scalar", "tensor"]))
def test_getitem_and_setitem_match_torch(device, c, value):
    shape, idx, layout, idtype = c
    if idx is None:
        return
    t, vals = make(shape, layout, device)
    ref = torch.tensor(vals)
    want = ref[to_torch(idx)]
    got = t[to_bm(idx, device, idtype)]
    assert tuple(got.shape) == tuple(want.shape), (idx, got.shape, want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # setitem with unique positions (torch leaves duplicates unspecified): negate what was read
    if want.numel() and _unique(vals, idx):
        v = -(want + 1000)
        if value == "scalar":
            t[to_bm(idx, device, idtype)] = -5.0
            ref[to_torch(idx)] = -5.0
        else:
            t[to_bm(idx, device, idtype)] = bm.tensor(v.numpy(), device=device)
            ref[to_torch(idx)] = v
        np.testing.assert_array_equal(t.numpy(), ref.numpy())


def _unique(vals, idx):
    """Whether the index reaches each element at most once (so the write result is defined)."""
    pos = torch.arange(vals.size).reshape(vals.shape)[to_torch(idx)]
    return pos.unique().numel() == pos.numel()
