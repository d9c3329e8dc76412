"""Issue 12's reductions, scans, sorting and comparisons against torch (CPU, the oracle) on every
device and layout of the harness: std, prod, logsumexp, norm / linalg.vector_norm, cumsum / cumprod
dtype rules, sort / argsort (stable, NaN as the largest), topk, median, unique, count_nonzero,
isclose / allclose / equal, max / min, any / all with dims; their errors; gradients at zeros.
The registry rows themselves (prod, cumsum, cumprod, argsort) also run in tests/test_ops.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer.testing import assert_close
from harness import DEVICES, LAYOUTS, TOL, dtypes_on, make_input

# torch warns when N - correction <= 0 (0-d and empty inputs); both sides then give inf / nan.
pytestmark = pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning")

FLOATS = [bm.float32, bm.float16, bm.bfloat16, bm.float64]
INTS = [bm.int32, bm.int64]
_TORCH = {bm.float32: torch.float32, bm.float16: torch.float16, bm.bfloat16: torch.bfloat16,
          bm.float64: torch.float64, bm.int32: torch.int32, bm.int64: torch.int64, bm.bool: torch.bool}


def _pair(shape, dtype, device, layout, seed=0, domain="any"):
    """(bessemer tensor, torch tensor of the same values, in the same dtype)."""
    x, v = make_input(shape, dtype, device, layout, np.random.default_rng(seed), domain)
    return x, torch.from_numpy(np.array(v)).to(_TORCH[dtype])


def _np(t):
    if isinstance(t, torch.Tensor):
        return (t.float() if t.dtype in (torch.bfloat16, torch.float16) else t).numpy()
    return t


def _close(ours, ref, dtype=None, rtol=None, atol=None):
    dtype = dtype or ours.dtype
    r, a = TOL[dtype]
    assert_close(ours, _np(ref), rtol if rtol is not None else r, atol if atol is not None else a, check_dtype=False)


def _tensor(values, dtype, device):
    return bm.tensor(np.asarray(values, dtype=np.float64), dtype=dtype, device=device)


PARAMS = [(d, lay) for d in DEVICES for lay in LAYOUTS]


# ---- std, logsumexp, norm ----

@pytest.mark.parametrize("device,layout", PARAMS)
def test_std(device, layout):
    for dtype in dtypes_on(device, FLOATS):
        x, t = _pair((3, 4), dtype, device, layout)
        tt = t.double()
        for kw in ({}, {"dim": 0}, {"dim": (0, 1), "keepdim": True}, {"dim": -1, "correction": 0},
                   {"dim": -1, "unbiased": False}):
            if x.ndim == 0 and "dim" in kw and kw["dim"] not in (0, -1):
                continue
            got = bm.std(x, **kw)
            want = torch.std(tt, **kw)
            assert got.dtype == dtype
            _close(got, want, rtol=TOL[dtype][0] * 4, atol=TOL[dtype][1] * 4)
    assert_close(x.std(0), _np(torch.std(t.double(), 0)), 5e-2, 5e-2, check_dtype=False)  # the method


@pytest.mark.parametrize("device", DEVICES)
def test_std_refuses_integers(device):
    x = bm.arange(6, device=device)
    with pytest.raises(bm.UnsupportedError, match=r"^\[std\] expected a floating point input, got int64"):
        bm.std(x)
    with pytest.raises(TypeError, match=r"^\[std\] give either correction or unbiased"):
        bm.std(x.float(), unbiased=True, correction=0)


@pytest.mark.parametrize("device,layout", PARAMS)
def test_logsumexp(device, layout):
    for dtype in dtypes_on(device, FLOATS + INTS):
        x, t = _pair((3, 4), dtype, device, layout)
        for dim, keep in ((-1, False), ((0, 1), True), (0, True)):
            if x.ndim == 0 and dim not in (0, -1):
                continue
            got = bm.logsumexp(x, dim, keepdim=keep)
            want = torch.logsumexp(t.double(), dim, keepdim=keep)
            assert got.dtype == (dtype if dtype in FLOATS else bm.float32)
            _close(got, want)


@pytest.mark.parametrize("device", DEVICES)
def test_logsumexp_infinities(device):
    v = [[-math.inf, -math.inf, -math.inf], [math.inf, 1.0, 2.0], [1000.0, 1000.0, -1000.0], [math.nan, 0.0, 1.0]]
    got = bm.logsumexp(_tensor(v, bm.float32, device), 1)
    _close(got, torch.logsumexp(torch.tensor(v), 1))


NORM_ORDS = [2, "fro", 1, 3, 0.5, math.inf, -math.inf, 0]


@pytest.mark.parametrize("device,layout", PARAMS)
def test_norm_and_vector_norm(device, layout):
    for dtype in dtypes_on(device, FLOATS):
        x, t = _pair((3, 4), dtype, device, layout)
        tt = t.double()
        for p in NORM_ORDS:
            for dim, keep in ((None, False), (-1, True), ((0, 1), False)):
                if x.ndim == 0 and dim not in (None, -1):
                    continue
                if x.numel() == 0 and p in (math.inf, -math.inf):
                    with pytest.raises(ValueError, match=r"^\[linalg\.vector_norm\]"):
                        bm.norm(x, p, dim, keep)
                    continue
                got = bm.norm(x, p, dim, keep)
                assert got.dtype == dtype
                _close(got, torch.norm(tt, p, dim, keep), rtol=TOL[dtype][0] * 4, atol=TOL[dtype][1] * 4)
                if p != "fro":
                    got = bm.linalg.vector_norm(x, p, dim, keep)
                    _close(got, torch.linalg.vector_norm(tt, p, dim, keep), rtol=TOL[dtype][0] * 4,
                           atol=TOL[dtype][1] * 4)
    _close(x.norm(), torch.norm(tt))  # the method, default p='fro'


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("p", [2, 3, 0.5, 1])
def test_norm_gradient_where_the_norm_is_zero_matches_torch(device, p):
    # sqrt and pow(., 1/p) have an infinite derivative at 0: a zero row must get torch's gradient
    # (0), not 0 * inf = NaN; the other rows and create_graph are unaffected.
    v = [[0.0, 0.0, 0.0], [3.0, -4.0, 1.0]]
    x = bm.tensor(v, device=device, requires_grad=True)
    (bm.linalg.vector_norm(x, p, dim=1) * bm.tensor([2.0, 3.0], device=device)).sum().backward()
    t = torch.tensor(v, dtype=torch.float64, requires_grad=True)
    (torch.linalg.vector_norm(t, p, dim=1) * torch.tensor([2.0, 3.0], dtype=torch.float64)).sum().backward()
    _close(x.grad, t.grad)
    z = bm.zeros(4, device=device, requires_grad=True)
    (g,) = bm.autograd.grad(bm.norm(z, p), z, create_graph=True)
    _close(g, torch.zeros(4))
    nan = bm.tensor([math.nan, 1.0], device=device)
    assert math.isnan(bm.linalg.vector_norm(nan.requires_grad_(), p).item())  # NaN still propagates


@pytest.mark.parametrize("device", DEVICES)
def test_norm_errors(device):
    x = bm.arange(4, device=device)
    with pytest.raises(bm.UnsupportedError, match=r"^\[linalg\.vector_norm\] expected a floating point input"):
        bm.linalg.vector_norm(x)
    with pytest.raises(ValueError, match=r"^\[norm\] unsupported norm type 'nuc'"):
        bm.norm(x.float(), "nuc")
    got = bm.linalg.vector_norm(x.float(), dtype=bm.float32)
    _close(got, torch.linalg.vector_norm(torch.arange(4.0)))


# ---- prod, cumsum, cumprod dtype rules ----

@pytest.mark.parametrize("device", DEVICES)
def test_integer_dtype_rules(device):
    for dtype in (bm.bool, bm.int32, bm.int64):
        x, t = _pair((3, 4), dtype, device, "contiguous", domain="small")
        for name in ("cumsum", "cumprod"):
            got = getattr(bm, name)(x, 1)
            assert got.dtype == bm.int64
            np.testing.assert_array_equal(got.numpy(), getattr(torch, name)(t, 1).numpy())
            got = getattr(x, name)(0, dtype=bm.float32)
            assert got.dtype == bm.float32
            np.testing.assert_array_equal(got.numpy(), getattr(torch, name)(t, 0, dtype=torch.float32).numpy())
        got = bm.prod(x)
        assert got.dtype == bm.int64 and got.shape == ()
        assert got.item() == torch.prod(t).item()
        got = x.prod(1, keepdim=True)
        np.testing.assert_array_equal(got.numpy(), torch.prod(t, 1, keepdim=True).numpy())
    big = bm.tensor([2**40, 2**30], device=device)  # int64 products wrap as torch's
    assert bm.prod(big).item() == torch.prod(torch.tensor([2**40, 2**30])).item()
    huge = [2**62, 2**62, 2**62, -(2**62)]  # and so do sums (on Metal computed as ulong: no signed overflow)
    assert bm.tensor(huge, device=device).sum().item() == torch.tensor(huge).sum().item()


@pytest.mark.parametrize("device", DEVICES)
def test_scan_long_rows_and_errors(device):
    x, t = _pair((2, 3000), bm.float32, device, "transposed", seed=3)
    _close(bm.cumsum(x, 0), torch.cumsum(t.double(), 0))
    _close(bm.cumsum(x.T, 1), torch.cumsum(t.double().T, 1), rtol=1e-4, atol=1e-4)
    with pytest.raises(IndexError, match=r"^\[cumsum\] dim 2 is out of range"):
        bm.cumsum(x, 2)
    with pytest.raises(IndexError, match=r"^\[argsort\] dim -3 is out of range"):
        bm.argsort(x, -3)


# ---- sort, argsort, topk, median ----

def _with_nans(device, dtype, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.integers(-3, 4, (4, 9)).astype(np.float64)
    v[rng.random(v.shape) < 0.25] = np.nan
    v[0, 0], v[1, 2] = np.inf, -np.inf
    return bm.tensor(v, dtype=dtype, device=device), torch.from_numpy(v).to(_TORCH[dtype])


@pytest.mark.parametrize("device,layout", PARAMS)
def test_sort_argsort(device, layout):
    for dtype in dtypes_on(device, FLOATS + INTS + [bm.bool]):
        x, t = _pair((4, 6), dtype, device, layout, domain="exp")  # small integers: ties
        for dim in (-1, 0):
            for desc in (False, True):
                v, i = bm.sort(x, dim, descending=desc)
                tv, ti = torch.sort(t, dim=dim, descending=desc, stable=True)
                assert v.dtype == dtype and i.dtype == bm.int64
                np.testing.assert_array_equal(_np(v.to(bm.float32) if dtype == bm.bfloat16 else v), _np(tv))
                np.testing.assert_array_equal(i.numpy(), ti.numpy())
                np.testing.assert_array_equal(x.argsort(dim, descending=desc).numpy(),
                                              torch.argsort(t, dim=dim, descending=desc, stable=True).numpy())
        r = x.sort()  # the method and the named tuple
        assert r.values is r[0] and r.indices is r[1]


@pytest.mark.parametrize("device", DEVICES)
def test_sort_nan_is_largest(device):
    for dtype in dtypes_on(device, FLOATS):
        x, t = _with_nans(device, dtype)
        for desc in (False, True):
            v, i = bm.sort(x, -1, descending=desc, stable=True)
            tv, ti = torch.sort(t, dim=-1, descending=desc, stable=True)
            np.testing.assert_array_equal(v.to(bm.float32).numpy(), _np(tv))
            np.testing.assert_array_equal(i.numpy(), ti.numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_sort_long_rows(device):
    """Rows longer than Metal's rank sort takes (the merge sort), strided, with ties and NaN."""
    rng = np.random.default_rng(9)
    v = rng.integers(-20, 20, (1001, 3)).astype(np.float32)
    v[rng.random(v.shape) < 0.05] = np.nan
    x = bm.tensor(v, device=device)
    for desc in (False, True):
        vals, idx = bm.sort(x, 0, descending=desc)
        tv, ti = torch.sort(torch.from_numpy(v), dim=0, descending=desc, stable=True)
        np.testing.assert_array_equal(vals.numpy(), tv.numpy())
        np.testing.assert_array_equal(idx.numpy(), ti.numpy())
    v, i = bm.topk(x, 5, dim=0)
    np.testing.assert_array_equal(v.numpy(), torch.topk(torch.from_numpy(x.numpy()), 5, dim=0).values.numpy())


@pytest.mark.parametrize("device,layout", PARAMS)
def test_topk(device, layout):
    for dtype in dtypes_on(device, FLOATS + INTS):
        x, t = _pair((4, 6), dtype, device, layout, seed=1)
        n = x.shape[-1] if x.ndim else 1
        for k in sorted({0, min(1, n), min(3, n), n}):
            for largest in (True, False):
                v, i = bm.topk(x, k, largest=largest)
                tv, ti = torch.topk(t, k, largest=largest)
                assert tuple(v.shape) == tuple(tv.shape) and i.dtype == bm.int64
                _close(v, tv)
                if x.numel():  # the values at our indices are the values (torch's tie order is its own)
                    ref = torch.take_along_dim(t, torch.from_numpy(i.numpy()), -1) if t.ndim else t
                    _close(v, ref)
        with pytest.raises(IndexError, match=r"^\[topk\] k \(7\) is out of range"):
            bm.topk(x, 7)


@pytest.mark.parametrize("device", DEVICES)
def test_topk_nan_and_dim(device):
    x, t = _with_nans(device, bm.float32)
    v, i = x.topk(3, dim=1)
    tv, ti = torch.topk(t, 3, dim=1)
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    v, i = bm.topk(x, 2, dim=0, largest=False)
    np.testing.assert_array_equal(v.numpy(), torch.topk(t, 2, dim=0, largest=False).values.numpy())


@pytest.mark.parametrize("device,layout", PARAMS)
def test_median(device, layout):
    for dtype in dtypes_on(device, FLOATS + INTS):
        for shape in ((3, 4), (3, 5)):
            x, t = _pair(shape, dtype, device, layout, seed=2)
            if x.numel() == 0:
                if dtype in FLOATS:
                    assert math.isnan(bm.median(x).item())
                with pytest.raises(IndexError, match=r"^\[median\] cannot take the median over dim"):
                    bm.median(x, -1)
                continue
            _close(bm.median(x), torch.median(t))
            for dim in (-1, 0):
                for keep in (False, True):
                    v, i = bm.median(x, dim, keepdim=keep)
                    tv, ti = torch.median(t, dim, keepdim=keep)
                    _close(v, tv)
                    assert tuple(i.shape) == tuple(ti.shape)
                    if t.ndim:  # the values sit at our indices (tied values may pick another index)
                        ii = torch.from_numpy(i.numpy() if keep else np.expand_dims(i.numpy(), dim))
                        got = torch.take_along_dim(t, ii, dim)
                        _close(v, got if keep else got.squeeze(dim))


@pytest.mark.parametrize("device", DEVICES)
def test_median_nan(device):
    x, t = _with_nans(device, bm.float32)
    v, i = bm.median(x, 1)
    tv, ti = torch.median(t, 1)
    np.testing.assert_array_equal(v.numpy(), tv.numpy())
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    assert math.isnan(x.median().item())


# ---- unique ----

@pytest.mark.parametrize("device", DEVICES)
def test_unique(device):
    for dtype in dtypes_on(device, FLOATS + INTS + [bm.bool]):
        x, t = _pair((5, 6), dtype, device, "transposed", domain="exp")
        v = bm.unique(x)
        assert str(v.device) == device and v.dtype == dtype
        np.testing.assert_array_equal(_np(v.to(bm.float32) if dtype == bm.bfloat16 else v), _np(torch.unique(t)))
        v, inv, cnt = x.unique(return_inverse=True, return_counts=True)
        tv, tinv, tcnt = torch.unique(t, return_inverse=True, return_counts=True)
        np.testing.assert_array_equal(inv.numpy(), tinv.numpy())
        np.testing.assert_array_equal(cnt.numpy(), tcnt.numpy())
        for dim in (0, 1):
            v, inv, cnt = bm.unique(x, return_inverse=True, return_counts=True, dim=dim)
            tv, tinv, tcnt = torch.unique(t, return_inverse=True, return_counts=True, dim=dim)
            np.testing.assert_array_equal(_np(v.to(bm.float32) if dtype == bm.bfloat16 else v), _np(tv))
            np.testing.assert_array_equal(inv.numpy(), tinv.numpy())
            np.testing.assert_array_equal(cnt.numpy(), tcnt.numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_unique_nan_empty_0d(device):
    v = [1.0, math.nan, 2.0, math.nan, 1.0]
    got = bm.unique(_tensor(v, bm.float32, device), return_inverse=True, return_counts=True)
    want = torch.unique(torch.tensor(v), return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    e = bm.unique(bm.zeros(0, 3, device=device), return_inverse=True)
    assert tuple(e[0].shape) == (0,) and tuple(e[1].shape) == (0, 3)
    z = bm.unique(bm.tensor(4.0, device=device), return_inverse=True)
    assert z[0].tolist() == [4.0] and tuple(z[1].shape) == ()
    sorted_false = bm.unique(bm.tensor([3, 1, 3], device=device), sorted=False)
    assert sorted(sorted_false.tolist()) == [1, 3]


# ---- count_nonzero, isclose, allclose, equal ----

@pytest.mark.parametrize("device,layout", PARAMS)
def test_count_nonzero(device, layout):
    for dtype in dtypes_on(device, FLOATS + INTS + [bm.bool]):
        x, t = _pair((3, 4), dtype, device, layout, domain="exp")
        for dim in (None, 0, (0, 1), -1):
            if x.ndim == 0 and dim not in (None, 0, -1):
                continue
            got = bm.count_nonzero(x, dim)
            assert got.dtype == bm.int64
            np.testing.assert_array_equal(got.numpy(), torch.count_nonzero(t, dim).numpy())


@pytest.mark.parametrize("device,layout", PARAMS)
def test_isclose_allclose(device, layout):
    for dtype in dtypes_on(device, FLOATS + INTS):
        a, ta = _pair((3, 4), dtype, device, layout, seed=4)
        b, tb = _pair((3, 4), dtype, device, layout, seed=5)
        for kw in ({}, {"rtol": 0.5, "atol": 0.5}, {"rtol": 0.0, "atol": 2.0}):
            got = bm.isclose(a, b, **kw)
            assert got.dtype == bm.bool
            np.testing.assert_array_equal(got.numpy(), torch.isclose(ta, tb, **kw).numpy())
            assert bm.allclose(a, b, **kw) == torch.allclose(ta, tb, **kw)
            assert a.isclose(a).numpy().all() and a.allclose(a)
        assert bm.equal(a, b) == torch.equal(ta, tb) and bm.equal(a, a) and a.equal(a)


@pytest.mark.parametrize("device", DEVICES)
def test_isclose_special_values(device):
    va = [math.inf, -math.inf, math.inf, math.nan, math.nan, 1.0, 1.0, 0.0]
    vb = [math.inf, -math.inf, -math.inf, math.nan, 1.0, 1.0 + 1e-6, 1.1, 1e-9]
    for dtype in dtypes_on(device, FLOATS):
        a, b = _tensor(va, dtype, device), _tensor(vb, dtype, device)
        ta, tb = torch.tensor(va).to(_TORCH[dtype]), torch.tensor(vb).to(_TORCH[dtype])
        for equal_nan in (False, True):
            np.testing.assert_array_equal(bm.isclose(a, b, equal_nan=equal_nan).numpy(),
                                          torch.isclose(ta, tb, equal_nan=equal_nan).numpy())
        np.testing.assert_array_equal(bm.isclose(a, b[:1]).numpy(), torch.isclose(ta, tb[:1]).numpy())  # broadcast
        assert bm.equal(a, a) == torch.equal(ta, ta)  # NaN != NaN
    assert bm.equal(bm.tensor([1, 2], device=device), bm.tensor([1.0, 2.0], device=device))
    assert not bm.equal(bm.zeros(2, device=device), bm.zeros(3, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_isclose_errors(device):
    a = bm.zeros(3, device=device)
    with pytest.raises(TypeError, match=r"^\[isclose\] expected both inputs to have the same dtype"):
        bm.isclose(a, bm.zeros(3, dtype=bm.int64, device=device))
    with pytest.raises(ValueError, match=r"^\[isclose\] rtol must be greater than or equal to zero"):
        bm.isclose(a, a, rtol=-1.0)
    with pytest.raises(ValueError, match=r"^\[isclose\] .*broadcast|^\[isclose\] shapes"):
        bm.isclose(a, bm.zeros(4, device=device))
    other = next((d for d in DEVICES if d != device), None)
    if other is not None:
        for fn in (bm.isclose, bm.allclose, bm.equal):
            with pytest.raises(bm.DeviceMismatchError, match=rf"^\[{fn.__name__}\] inputs are on different devices"):
                fn(a, bm.zeros(3, device=other))


# ---- max / min, any / all ----

@pytest.mark.parametrize("device,layout", PARAMS)
def test_max_min(device, layout):
    for dtype in dtypes_on(device, FLOATS + INTS):
        x, t = _pair((3, 5), dtype, device, layout, seed=6)
        y, ty = _pair((3, 5), dtype, device, layout, seed=7)
        for name in ("max", "min"):
            fn, tfn = getattr(bm, name), getattr(torch, name)
            _close(fn(x, y), tfn(t, ty))
            if x.numel() == 0:
                continue
            r = fn(x)
            assert r.shape == () and r.dtype == dtype
            _close(r, tfn(t))
            for dim in (0, -1):
                for keep in (False, True):
                    v, i = fn(x, dim, keepdim=keep)
                    tv, ti = tfn(t, dim, keepdim=keep)
                    assert fn(x, dim).values.shape == tuple(tfn(t, dim).values.shape)
                    assert type(fn(x, dim)).__name__ == type(tfn(t, dim)).__name__ == name
                    _close(v, tv)
                    np.testing.assert_array_equal(i.numpy(), ti.numpy())


@pytest.mark.parametrize("device,layout", PARAMS)
def test_any_all_dims(device, layout):
    for dtype in dtypes_on(device, [bm.float32, bm.int64, bm.bool]):
        x, t = _pair((3, 4), dtype, device, layout, domain="exp")
        for name in ("any", "all"):
            for dim in (None, 0, -1, (0, 1)):
                for keep in (False, True):
                    if x.ndim == 0 and dim not in (None, 0, -1):
                        continue
                    if dim is None and keep:
                        continue  # torch.any(x) has no keepdim
                    got = getattr(bm, name)(x, dim, keep) if dim is not None else getattr(x, name)()
                    want = getattr(torch, name)(t, dim, keep) if dim is not None else getattr(torch, name)(t)
                    assert got.dtype == bm.bool
                    np.testing.assert_array_equal(got.numpy(), want.numpy())


# ---- gradients at zeros (the rules' special cases), against torch ----

@pytest.mark.parametrize("device", DEVICES)
def test_prod_cumprod_gradient_at_zeros(device):
    v = [[1.5, 0.0, 2.0, -1.0], [0.0, 3.0, 0.0, 2.0], [1.0, 2.0, 3.0, 4.0], [2.0, -1.0, 0.5, 0.0]]
    g = np.random.default_rng(8).standard_normal((4, 4))
    for fn in (lambda x: x.prod(1), lambda x: x.prod(), lambda x: x.cumprod(1), lambda x: x.cumprod(0)):
        x = bm.tensor(v, device=device, requires_grad=True)
        t = torch.tensor(v, dtype=torch.float64, requires_grad=True)
        y, yt = fn(x), fn(t)
        gy = torch.from_numpy(g.reshape(-1)[:yt.numel()].reshape(tuple(yt.shape)).copy())
        y.backward(bm.tensor(gy.numpy().astype(np.float32), device=device))
        yt.backward(gy)
        assert_close(x.grad, t.grad.numpy(), 1e-5, 1e-5, check_dtype=False)
