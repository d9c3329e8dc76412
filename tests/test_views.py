"""View ops against NumPy: shapes, strides, storage sharing and values, on every device."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bessemer as bm
from harness import DEVICES

pytestmark = pytest.mark.parametrize("device", DEVICES)


def pair(shape, device, dtype=np.float32):
    a = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    return bm.tensor(a, device=device), a


def same(t, a):
    assert tuple(t.shape) == a.shape
    np.testing.assert_array_equal(t.numpy(), a)


def test_transpose_permute_T(device):
    t, a = pair((2, 3, 4), device)
    same(t.transpose(0, 2), a.transpose(2, 1, 0))
    same(t.permute(1, 2, 0), a.transpose(1, 2, 0))
    same(t.T, a.T)
    same(t.mT, np.swapaxes(a, -1, -2))
    assert t.transpose(0, 1)._storage_id() == t._storage_id()
    assert t.transpose(-1, 0).stride() == (1, 4, 12)


def test_reshape_view_flatten(device):
    t, a = pair((2, 3, 4), device)
    same(t.view(6, 4), a.reshape(6, 4))
    same(t.view(-1), a.reshape(-1))
    same(t.reshape(4, -1), a.reshape(4, -1))
    same(t.flatten(), a.reshape(-1))
    same(t.flatten(1), a.reshape(2, 12))
    same(t.transpose(0, 1).reshape(-1), a.transpose(1, 0, 2).reshape(-1))
    assert t.view(24)._storage_id() == t._storage_id()


def test_view_of_noncontiguous_errors_like_torch(device):
    t, _ = pair((2, 3), device)
    with pytest.raises(ValueError, match=r"\[view\].*reshape"):
        t.T.view(6)
    r = t.T.reshape(6)  # reshape copies instead
    assert r._storage_id() != t._storage_id()


def test_reshape_errors(device):
    t, _ = pair((2, 3), device)
    with pytest.raises(ValueError, match=r"\[reshape\] shape \(4,\) is invalid for input of size 6"):
        t.reshape(4)
    with pytest.raises(ValueError, match="only one dimension"):
        t.reshape(-1, -1)
    with pytest.raises(ValueError, match="invalid size"):
        t.reshape(-2, 3)


def test_unsqueeze_squeeze_expand(device):
    t, a = pair((3, 1, 2), device)
    same(t.unsqueeze(0), a[None])
    same(t.unsqueeze(-1), a[..., None])
    same(t.squeeze(), a.squeeze())
    same(t.squeeze(1), a.squeeze(1))
    same(t.squeeze(0), a)  # a dim of size != 1 is left alone, as in torch
    e = t.expand(2, 3, 4, 2)
    same(e, np.broadcast_to(a, (2, 3, 4, 2)))
    assert e.stride()[0] == 0 and e.stride()[2] == 0
    same(t.expand(-1, 5, -1), np.broadcast_to(a, (3, 5, 2)))
    with pytest.raises(ValueError, match=r"\[expand\]"):
        t.expand(4, 1, 2)


def test_getitem(device):
    t, a = pair((4, 5, 6), device)
    for idx in [1, -1, (1, 2), (slice(None), 3), (slice(1, None, 2),), (Ellipsis, 2), (None, 1),
                (slice(None), None, slice(0, 4, 3)), (1, Ellipsis, slice(None, None, 4)), (slice(10, 20),),
                (slice(-3, None),), (2, 3, 4)]:
        same(t[idx], a[idx])
    assert t[1, 2, 3].ndim == 0
    with pytest.raises(IndexError, match=r"out of bounds"):
        t[4]
    with pytest.raises(IndexError, match="too many indices"):
        t[1, 2, 3, 4]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        t[::0]
    with pytest.raises(TypeError, match="only integers, slices"):
        t[1.5]


def test_0d_and_empty(device):
    s = bm.tensor(3.5, device=device)
    assert s.shape == () and s.ndim == 0 and s.item() == 3.5
    same(s.unsqueeze(0), np.array([3.5], dtype=np.float32))
    same(s.reshape(1, 1), np.full((1, 1), 3.5, dtype=np.float32))
    e = bm.zeros(0, 3, device=device)
    same(e.T, np.zeros((3, 0), dtype=np.float32))
    same(e.reshape(3, 0, 5), np.zeros((3, 0, 5), dtype=np.float32))


def test_cat_stack(device):
    t, a = pair((2, 3), device)
    u, b = pair((4, 3), device)
    same(bm.cat([t, u]), np.concatenate([a, b]))
    same(bm.cat([t.T, u.T], dim=1), np.concatenate([a.T, b.T], axis=1))
    same(bm.cat([t, bm.zeros(0, device=device)]), a)  # legacy empty (0,) tensors are skipped, as in torch
    v, c = pair((2, 3), device, np.int64)
    same(bm.stack([t, v.to(bm.float32)]), np.stack([a, c.astype(np.float32)]))
    same(bm.stack([t, t], dim=-1), np.stack([a, a], axis=-1))
    i = bm.tensor([[1, 2, 3]], dtype=bm.int32, device=device)
    r = bm.cat([t, i])
    assert r.dtype == bm.float32  # promoted, as torch.cat does
    with pytest.raises(ValueError, match=r"\[cat\] sizes of tensors must match"):
        bm.cat([t, bm.zeros(2, 4, device=device)])
    with pytest.raises(ValueError, match=r"\[stack\] expects each tensor to be equal size"):
        bm.stack([t, u])
    with pytest.raises(IndexError, match=r"\[cat\] dim 2"):
        bm.cat([t, t], dim=2)


@st.composite
def strided_case(draw):
    """A random shape and a random chain of view ops applied to it."""
    shape = draw(st.lists(st.integers(0, 5), min_size=1, max_size=4))
    ops = draw(st.lists(st.sampled_from(["transpose", "slice", "unsqueeze", "expand", "select", "flip_perm"]),
                        max_size=4))
    seeds = draw(st.lists(st.integers(0, 10**6), min_size=len(ops), max_size=len(ops)))
    return shape, list(zip(ops, seeds, strict=True))


@settings(max_examples=60, deadline=None)
@given(case=strided_case())
def test_random_view_chains_match_numpy(device, case):
    shape, ops = case
    t, a = pair(tuple(shape), device)
    for op, seed in ops:
        rng = np.random.default_rng(seed)
        nd = a.ndim
        if op == "transpose" and nd >= 2:
            i, j = rng.integers(0, nd, 2)
            t, a = t.transpose(int(i), int(j)), np.swapaxes(a, i, j)
        elif op == "slice" and nd >= 1:
            d = int(rng.integers(0, nd))
            start, step = int(rng.integers(0, 3)), int(rng.integers(1, 3))
            idx = (slice(None),) * d + (slice(start, None, step),)
            t, a = t[idx], a[idx]
        elif op == "unsqueeze":
            d = int(rng.integers(0, nd + 1))
            t, a = t.unsqueeze(d), np.expand_dims(a, d)
        elif op == "expand" and nd >= 1 and 1 in a.shape:
            target = tuple(3 if s == 1 else s for s in a.shape)
            t, a = t.expand(*target), np.broadcast_to(a, target)
        elif op == "select" and nd >= 1 and a.shape[0] > 0:
            k = int(rng.integers(0, a.shape[0]))
            t, a = t[k], a[k]
        elif op == "flip_perm" and nd >= 1:
            perm = [int(x) for x in rng.permutation(nd)]
            t, a = t.permute(*perm), a.transpose(perm)
    same(t, a)
    same(t.contiguous(), np.array(a))  # (np.ascontiguousarray would make 0-d arrays 1-d)
    assert t.contiguous().is_contiguous()
    same(t.reshape(-1), a.reshape(-1))
