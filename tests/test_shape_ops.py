"""The shape functions beyond the op table's rows: views stay views (same storage, writes show
through), split / chunk / unbind / narrow / movedim against torch, gather / scatter errors raised
before anything is written, duplicate scatter targets, determinism across runs and devices,
negative-step slicing (read and write), einsum's forms and errors, where(cond)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer.testing import assert_close
from harness import DEVICES


def _pair(shape, device, seed=0, dtype=np.float32):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return bm.tensor(a, device=device), torch.from_numpy(a.copy())


def _same_storage(a, b) -> bool:
    return a._storage_id() == b._storage_id()


@pytest.mark.parametrize("device", DEVICES)
def test_views_share_storage_and_match_torch(device):
    x, xt = _pair((4, 6), device)
    views = {
        "t": (x.t(), xt.t()), "t_fn": (bm.t(x), torch.t(xt)), "mT": (x.mT, xt.mT),
        "narrow": (x.narrow(1, -4, 3), xt.narrow(1, -4, 3)), "narrow_fn": (bm.narrow(x, 0, 1, 2), xt.narrow(0, 1, 2)),
        "movedim": (bm.movedim(x.reshape(2, 2, 6), (0, 2), (2, 0)), torch.movedim(xt.reshape(2, 2, 6), (0, 2), (2, 0))),
        "moveaxis": (x.moveaxis(0, -1), xt.moveaxis(0, -1)), "swapaxes": (bm.swapaxes(x, 0, 1), xt.swapaxes(0, 1)),
        "swapdims": (x.swapdims(1, 0), xt.swapdims(1, 0)), "diagonal": (x.diagonal(-1), xt.diagonal(-1)),
        "diagonal_fn": (bm.diagonal(x, 2, 1, 0), torch.diagonal(xt, 2, 1, 0)),
    }
    for name, (ours, ref) in views.items():
        assert _same_storage(ours, x), name
        assert tuple(ours.shape) == tuple(ref.shape), name
        assert_close(ours, ref.numpy(), 0, 0)
    pieces = {
        "split_int": (x.split(4, 1), xt.split(4, 1)), "split_list": (bm.split(x, [1, 0, 3], 0), xt.split([1, 0, 3], 0)),
        "chunk": (x.chunk(4, 1), xt.chunk(4, 1)), "chunk_fewer": (bm.chunk(x, 4, 0), xt.chunk(4, 0)),
        "chunk_empty": (bm.chunk(x[:0], 3), xt[:0].chunk(3)), "unbind": (x.unbind(1), xt.unbind(1)),
        "unbind_fn": (bm.unbind(x), torch.unbind(xt)),
    }
    for name, (ours, ref) in pieces.items():
        assert isinstance(ours, tuple) and len(ours) == len(ref), name
        for o, r in zip(ours, ref):
            assert _same_storage(o, x), name
            assert tuple(o.shape) == tuple(r.shape), name
            assert_close(o, r.numpy(), 0, 0)
    # a write through a view shows in the base
    x.narrow(0, 1, 1).fill_(7.0)
    assert np.all(x.numpy()[1] == 7.0)
    x.t()[0, 2] = -3.0
    assert x[2, 0].item() == -3.0


@pytest.mark.parametrize("device", DEVICES)
def test_t_of_small_tensors_and_errors(device):
    v = bm.arange(3.0, device=device)
    assert tuple(v.t().shape) == (3,) and _same_storage(v.t(), v)
    s = bm.tensor(2.0, device=device)
    assert s.t().ndim == 0 and s.t().item() == 2.0
    with pytest.raises(ValueError, match=r"\[t\] expects a tensor with <= 2 dims"):
        bm.zeros(2, 3, 4, device=device).t()
    with pytest.raises(ValueError, match=r"\[mT\]"):
        _ = v.mT
    with pytest.raises(ValueError, match=r"\[split\] split sizes \[1, 1\] must be non-negative and sum to 3"):
        v.split([1, 1])
    with pytest.raises(ValueError, match=r"\[chunk\] chunks must be a positive int"):
        v.chunk(0)
    with pytest.raises(ValueError, match=r"\[narrow\] start \(2\) \+ length \(2\) exceeds"):
        v.narrow(0, 2, 2)
    with pytest.raises(IndexError, match=r"\[narrow\] start 4 is out of range"):
        v.narrow(0, 4, 0)
    with pytest.raises(ValueError, match=r"\[movedim\] repeated dim in source"):
        bm.zeros(2, 3, device=device).movedim((0, 0), (0, 1))
    with pytest.raises(ValueError, match=r"\[diagonal\] dim1 and dim2 cannot be the same"):
        bm.zeros(2, 3, device=device).diagonal(0, 1, 1)
    with pytest.raises(ValueError, match=r"\[mm\] expects two 2-D tensors, got 1-D and 2-D"):
        bm.mm(v, bm.zeros(3, 2, device=device))
    with pytest.raises(ValueError, match=r"\[bmm\] batch sizes differ: 2 and 3"):
        bm.bmm(bm.zeros(2, 1, 3, device=device), bm.zeros(3, 3, 1, device=device))
    with pytest.raises(ValueError, match=r"\[outer\] expects two 1-D tensors"):
        bm.outer(s, v)


@pytest.mark.parametrize("device", DEVICES)
def test_gather_scatter_errors_write_nothing(device):
    x = bm.zeros(3, 4, device=device)
    src = bm.ones(3, 4, device=device)
    bad = bm.tensor([[0, 1], [3, 0]], device=device)  # 3 is out of range along dim 0
    neg = bm.tensor([[0, -1]], device=device)
    for fn, name in ((lambda i: x.scatter_(0, i, src), "scatter"), (lambda i: x.scatter_add_(0, i, src), "scatter_add"),
                     (lambda i: x.scatter_(0, i, value=5.0), "scatter"), (lambda i: bm.gather(x, 0, i), "gather")):
        with pytest.raises(IndexError, match=rf"\[{name}\] index 3 is out of bounds for dimension 0 with size 3"):
            fn(bad)
        with pytest.raises(IndexError, match=rf"\[{name}\] index -1 is out of bounds"):
            fn(neg)
        assert not np.any(x.numpy()), f"{name} wrote before raising"
    with pytest.raises(ValueError, match=r"\[gather\] index of shape \(4, 2\) is larger than self"):
        bm.gather(x, 1, bm.zeros(4, 2, dtype=bm.int64, device=device))
    with pytest.raises(ValueError, match=r"\[scatter\] index of shape \(3,\) must have as many dims as self"):
        bm.scatter(x, 0, bm.zeros(3, dtype=bm.int64, device=device), src)
    with pytest.raises(TypeError, match=r"\[scatter_add\] self \(float32\) and src \(int64\) must have the same dtype"):
        bm.scatter_add(x, 0, bm.zeros(1, 1, dtype=bm.int64, device=device), bm.zeros(1, 1, dtype=bm.int64,
                                                                                        device=device))
    with pytest.raises(TypeError, match=r"\[gather\] expected an int64 \(or int32\) index, got float32"):
        bm.gather(x, 0, x)
    with pytest.raises(bm.UnsupportedError, match=r"\[scatter\] reduce='multiply' is not supported"):
        bm.scatter(x, 0, bm.zeros(1, 1, dtype=bm.int64, device=device), src, reduce="multiply")
    with pytest.raises(TypeError, match=r"\[scatter\] give exactly one of src and value"):
        bm.scatter(x, 0, bm.zeros(1, 1, dtype=bm.int64, device=device))
    other = [d for d in DEVICES if d != device]
    if other:
        with pytest.raises(bm.DeviceMismatchError, match=r"\[gather\] inputs are on different devices"):
            bm.gather(x, 0, bm.zeros(1, 1, dtype=bm.int64, device=other[0]))


@pytest.mark.parametrize("device", DEVICES)
def test_scatter_duplicates_last_wins_and_scatter_add_is_deterministic(device):
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 5, (40, 7))  # many duplicate targets per column
    src = rng.standard_normal((40, 7)).astype(np.float32)
    base = rng.standard_normal((5, 7)).astype(np.float32)
    b, i, s = (bm.tensor(a, device=device) for a in (base, idx, src))
    # torch's CPU kernel writes in index order: the last duplicate wins, as ours
    want = torch.from_numpy(base).scatter(0, torch.from_numpy(idx), torch.from_numpy(src)).numpy()
    assert_close(bm.scatter(b, 0, i, s), want, 0, 0)
    adds = [bm.scatter_add(b, 0, i, s).numpy() for _ in range(3)]
    assert all(np.array_equal(a, adds[0]) for a in adds)  # the same bits every run
    ref = base.astype(np.float64).copy()
    np.add.at(ref, (idx, np.arange(7)[None, :].repeat(40, 0)), src.astype(np.float64))
    assert_close(adds[0], ref, 1e-5, 1e-5)
    if device != "cpu":  # and the same bits as the CPU
        cpu = bm.scatter_add(bm.tensor(base), 0, bm.tensor(idx), bm.tensor(src)).numpy()
        assert np.array_equal(cpu, adds[0])


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_variants(device):
    x, xt = _pair((4, 5), device, 1)
    i = torch.tensor([[1, 0, 3, 3, 2]])
    bi = bm.tensor(i.numpy(), device=device)
    for ours, ref in ((lambda a: a.tril_(-1), lambda a: a.tril_(-1)), (lambda a: a.triu_(1), lambda a: a.triu_(1)),
                      (lambda a: a.masked_fill_(a > 0, 0.5), lambda a: a.masked_fill_(a > 0, 0.5)),
                      (lambda a: a.scatter_(0, bi, 9.0 * a[:1]), lambda a: a.scatter_(0, i, 9.0 * a[:1])),
                      (lambda a: a.scatter_add_(0, bi, a[1:2] * 1), lambda a: a.scatter_add_(0, i, a[1:2] * 1)),
                      (lambda a: a.scatter_(1, bi[:, :4], value=-2.0), lambda a: a.scatter_(1, i[:, :4], -2.0))):
        a, at = x.clone(), xt.clone()
        r = ours(a)
        ref(at)
        assert r is a
        assert_close(a, at.numpy(), 0, 0)


@pytest.mark.parametrize("device", DEVICES)
def test_negative_step_slicing_reads_and_writes(device):
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    x = bm.tensor(a, device=device)
    for idx in ((slice(None, None, -1),), (slice(None), slice(3, 0, -2)), (Ellipsis, slice(-2, None, -3)),
                (1, slice(None, None, -1), slice(1, 4)), (slice(5, -5, -1),), (slice(0, 3, -1),),
                (bm.tensor([0, 2], device=device), slice(None, None, -2)), (None, slice(None, None, -1), 2)):
        npidx = tuple(np.array([0, 2]) if isinstance(k, bm.Tensor) else k for k in idx)
        assert_close(x[idx], a[npidx], 0, 0)
    for idx in ((slice(None, None, -1),), (slice(None), slice(3, None, -2)), (2, slice(None, None, -1), 0)):
        y, b = x.clone(), a.copy()
        v = np.arange(np.prod(b[idx].shape), dtype=np.float32).reshape(b[idx].shape) + 100
        y[idx] = bm.tensor(v, device=device)
        b[idx] = v
        assert_close(y, b, 0, 0)
        y[idx] = -1.0
        b[idx] = -1.0
        assert_close(y, b, 0, 0)
    with pytest.raises(bm.UnsupportedError, match=r"\[index_put\] a slice with a negative step together with tensor"):
        x[bm.tensor([0, 1], device=device), ::-1] = 0.0


@pytest.mark.parametrize("device", DEVICES)
def test_einsum_forms_and_errors(device):
    a, at = _pair((2, 3, 4), device, 4)
    b, bt = _pair((4, 3), device, 5)
    c, ct = _pair((1, 4), device, 6)
    for eq, ours, refs in (("bij,ji->b", (a, b), (at, bt)), ("...j,jk", (a, b), (at, bt)),
                           ("b i j , j k -> b k", (a, b), (at, bt)), ("bij,kj->bik", (a, c), (at, ct)),
                           ("ij,ij->ij", (b.t(), c.expand(3, 4)), (bt.t(), ct.expand(3, 4))),
                           ("bjj->bj", (a[:, :, :3],), (at[:, :, :3],)), ("...", (a,), (at,))):
        assert_close(bm.einsum(eq, *ours), torch.einsum(eq, *refs).numpy(), 1e-5, 1e-5)
    want = torch.einsum("ij,jk->ik", [bt.t(), ct.t()]).numpy()
    assert_close(bm.einsum("ij,jk->ik", [b.t(), c.t()]), want, 1e-5, 1e-5)
    for eq, ops, msg in (("ij,jk", (b,), r"the equation has 2 operands but 1 tensors"),
                         ("ijk", (b,), r"the equation has 3 subscripts for operand 0, which has 2 dims"),
                         ("ij->iz", (b,), r"output subscript 'z' does not appear"),
                         ("ij->ii", (b,), r"a subscript appears more than once in the output"),
                         ("ii->i", (b,), r"subscript i is repeated for operand 0 but the sizes don't match"),
                         ("ij,ij->i", (b, a[0]), r"operands do not broadcast"), ("i1", (b,), r"invalid subscript '1'"),
                         ("i..j", (b,), r"operand 0: '\.' may only appear as one '\.\.\.'")):
        with pytest.raises(ValueError, match=rf"\[einsum\] {msg}"):
            bm.einsum(eq, *ops)


@pytest.mark.parametrize("device", DEVICES)
def test_where_one_argument_and_repeat_interleave_indices(device):
    m = np.array([[True, False, True], [False, False, True]])
    got = bm.where(bm.tensor(m, device=device))
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, np.nonzero(m)):
        assert_close(g, w, 0, 0)
    x = bm.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    assert_close(x.where(x > 2, 0.0), np.where(x.numpy() > 2, x.numpy(), 0.0), 0, 0)
    assert_close(bm.repeat_interleave(bm.tensor([2, 0, 3], device=device)), np.repeat(np.arange(3), [2, 0, 3]), 0, 0)
    with pytest.raises(ValueError, match=r"\[repeat_interleave\] repeats cannot be negative"):
        bm.repeat_interleave(x, bm.tensor([1, -1], device=device), dim=0)
    with pytest.raises(ValueError, match=r"\[repeat_interleave\] repeats must have 1 value or as many"):
        bm.repeat_interleave(x, bm.tensor([1, 1, 1], device=device), dim=0)
    with pytest.raises(ValueError, match=r"\[repeat\] the number of repeat dims \(1\) cannot be smaller"):
        x.repeat(2)
    with pytest.raises(TypeError, match=r"\[masked_fill\] mask must be a bool tensor"):
        x.masked_fill(x, 1.0)
    with pytest.raises(ValueError, match=r"\[tril\] expected a tensor with at least 2 dims"):
        bm.tril(x[0])
    with pytest.raises(ValueError, match=r"\[flip\] dim -2 appears more than once"):
        bm.flip(x, (0, -2))


@pytest.mark.parametrize("device", DEVICES)
def test_scatter_gradient_with_src_larger_than_index(device):
    """torch's backward refuses a src larger than the index; ours gives src's elements outside the
    index's extent a zero gradient: compared with torch on the src narrowed to the index's shape."""
    x, xt = _pair((3, 4), device, 7)
    s, st = _pair((4, 6), device, 8)
    idx = np.array([[2, 0, 1, 2], [1, 1, 0, 2]])
    g = np.random.default_rng(9).standard_normal((3, 4)).astype(np.float32)
    for fn, tfn in ((bm.scatter, torch.scatter), (bm.scatter_add, torch.scatter_add)):
        a, b = x.detach().requires_grad_(), s.detach().requires_grad_()
        fn(a, 0, bm.tensor(idx, device=device), b).backward(bm.tensor(g, device=device))
        at, bt = xt.detach().requires_grad_(), st.detach().requires_grad_()
        tfn(at, 0, torch.from_numpy(idx), bt[:2, :4]).backward(torch.from_numpy(g))
        assert_close(a.grad, at.grad.numpy(), 1e-6, 1e-6)
        assert_close(b.grad, bt.grad.numpy(), 1e-6, 1e-6)
