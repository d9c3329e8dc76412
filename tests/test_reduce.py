"""Reductions and softmax beyond the op table: the torch-style API, errors, empty inputs, NaN
rules, accuracy on hard data, and the large shapes that take the parallel / blocked code paths.
Small shapes x layouts x dtypes are covered by the rows in op_cases.py."""

import warnings

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer.testing import assert_close

RNG = np.random.default_rng(1234)


def both(a: np.ndarray):
    """(bessemer tensor, torch tensor) holding a copy of a."""
    return bm.tensor(a), torch.from_numpy(np.array(a))


def close(ours, theirs, rtol=1.3e-6, atol=1e-5):
    t = theirs.numpy() if isinstance(theirs, torch.Tensor) else np.asarray(theirs)
    assert tuple(ours.shape) == tuple(t.shape)
    assert_close(ours, t, rtol, atol, check_dtype=False)


# ---- the torch-style API ----

def test_sum_mean_signatures_match_torch():
    a = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    x, t = both(a)
    close(x.sum(), t.sum())
    close(x.sum(0), t.sum(0))
    close(x.sum(dim=-1, keepdim=True), t.sum(dim=-1, keepdim=True))
    close(x.sum((0, 2)), t.sum((0, 2)))
    close(bm.sum(x, dim=[0, 1], keepdim=True), torch.sum(t, dim=[0, 1], keepdim=True))
    close(x.mean(1), t.mean(1))
    close(bm.mean(x, (0, 1), True), torch.mean(t, (0, 1), True))
    assert x.sum(dtype=bm.float64).dtype == bm.float64


def test_sum_result_dtypes_follow_torch():
    for dt, tdt in [(bm.bool, torch.bool), (bm.int32, torch.int32), (bm.int64, torch.int64)]:
        a = (RNG.integers(-5, 5, (4, 6)) if dt != bm.bool else RNG.random((4, 6)) < 0.5)
        x = bm.tensor(a, dtype=dt)
        t = torch.from_numpy(np.array(a)).to(tdt)
        r, rt = x.sum(0), t.sum(0)
        assert r.dtype == bm.int64 and rt.dtype == torch.int64
        assert r.tolist() == rt.tolist()
    half = bm.tensor([1.5, 2.5], dtype=bm.float16)
    assert half.sum().dtype == bm.float16 and half.amax().dtype == bm.float16


def test_max_min_forms():
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    x, t = both(a)
    close(x.max(), t.max())
    close(bm.min(x), torch.min(t))
    for fn in ("max", "min"):
        r, rt = getattr(x, fn)(1), getattr(t, fn)(1)
        assert isinstance(r, tuple) and r._fields == ("values", "indices")
        close(r.values, rt.values)
        assert r.indices.dtype == bm.int64 and r.indices.tolist() == rt.indices.tolist()
        v, i = getattr(x, fn)(dim=0, keepdim=True)
        vt, it = getattr(t, fn)(dim=0, keepdim=True)
        close(v, vt)
        assert i.tolist() == it.tolist()
    with pytest.raises(TypeError):
        x.max((0, 1))  # torch: max takes one dim; amax takes several
    b = a > 0
    xb, tb = both(b)
    for fn in ("max", "min"):
        r, rt = getattr(xb, fn)(1), getattr(tb, fn)(1)
        assert r.values.dtype == bm.bool and r.values.tolist() == rt.values.tolist()
        assert r.indices.tolist() == rt.indices.tolist()
    close(x.amax((0, 1)), t.amax((0, 1)))
    close(bm.amin(x, 0, True), torch.amin(t, 0, True))


def test_argmax_argmin_flattened_and_keepdim():
    a = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    x, t = both(a)
    for fn in ("argmax", "argmin"):
        assert getattr(x, fn)().item() == getattr(t, fn)().item()
        r, rt = getattr(x, fn)(keepdim=True), getattr(t, fn)(keepdim=True)
        assert r.shape == tuple(rt.shape) == (1, 1, 1) and r.tolist() == rt.tolist()
        for d in (0, 1, 2, -1):
            for k in (False, True):
                r, rt = getattr(bm, fn)(x, d, k), getattr(torch, fn)(t, d, k)
                assert r.shape == tuple(rt.shape) and r.tolist() == rt.tolist()


def test_argmax_first_index_of_ties_and_nan():
    a = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [0, np.nan, 5, np.nan], [-np.inf, -np.inf, -np.inf, -np.inf]],
                 dtype=np.float32)
    x, t = both(a)
    for fn in ("argmax", "argmin"):
        for d in (0, 1):
            assert getattr(x, fn)(d).tolist() == getattr(t, fn)(d).tolist(), (fn, d)
        assert getattr(x, fn)().item() == getattr(t, fn)().item()
    ints = np.array([[4, 9, 9, 1], [7, 7, 7, 7]], dtype=np.int64)
    xi, ti = both(ints)
    assert xi.argmax(1).tolist() == ti.argmax(1).tolist() == [1, 0]
    assert xi.argmin(0).tolist() == ti.argmin(0).tolist()


def test_amax_amin_propagate_nan():
    a = np.array([[1, np.nan, 3], [4, 5, 6], [np.nan, -1, np.nan]], dtype=np.float32)
    x, t = both(a)
    for fn in ("amax", "amin"):
        for d in ((), 0, 1):
            close(getattr(x, fn)(d), getattr(t, fn)(d))
    v, i = x.max(1)
    vt, it = t.max(1)
    close(v, vt)
    assert i.tolist() == it.tolist()


def test_var_corrections_match_torch():
    a = RNG.standard_normal((6, 7)).astype(np.float32)
    x, t = both(a)
    for c in (0, 1, 2):
        close(x.var(correction=c), t.var(correction=c))
        close(x.var(1, correction=c, keepdim=True), t.var(1, correction=c, keepdim=True))
    close(x.var(0, unbiased=False), t.var(0, unbiased=False))
    close(bm.var(x, 0, False, True), torch.var(t, 0, False, True))
    close(bm.var(x, False), torch.var(t, False))
    # N - correction <= 0: inf, or nan when every value is equal, as in torch
    one = np.array([[1.0, 2.0], [3.0, 3.0]], dtype=np.float32)
    xo, to = both(one)
    with warnings.catch_warnings():  # torch warns about the degrees of freedom
        warnings.simplefilter("ignore")
        for c in (2, 3):
            close(xo.var(1, correction=c), to.var(1, correction=c))
        close(bm.tensor(5.0).var(), torch.tensor(5.0).var())


def test_mean_var_reject_integers():
    x = bm.tensor([1, 2, 3])
    with pytest.raises(bm.UnsupportedError, match=r"^\[mean\]"):
        x.mean()
    with pytest.raises(bm.UnsupportedError, match=r"^\[var\]"):
        x.var()
    with pytest.raises(bm.UnsupportedError):
        bm.softmax(x, 0)


def test_bad_and_repeated_dims():
    x = bm.zeros(2, 3)
    for op in ("sum", "mean", "amax", "argmax"):
        with pytest.raises(IndexError, match=rf"^\[{op}\] dim 2 is out of range"):
            getattr(x, op)(2)
    with pytest.raises(IndexError):
        x.sum((0, -3))
    with pytest.raises(IndexError):
        bm.softmax(x, -3)
    with pytest.raises(ValueError, match="more than once"):
        x.sum((0, -2))
    with pytest.raises(ValueError):
        x.var((1, 1))


def test_empty_reductions():
    e = bm.zeros(3, 0)
    assert e.sum().item() == 0.0
    assert e.sum(1).tolist() == [0.0, 0.0, 0.0]
    assert e.sum(0).shape == (0,)
    assert bm.zeros(0, dtype=bm.int32).sum().dtype == bm.int64
    assert np.isnan(e.mean().item())
    assert np.isnan(e.mean(1).numpy()).all() and e.mean(1).shape == (3,)
    assert np.isnan(e.var().item())
    assert e.amax(0).shape == (0,)
    for call in (lambda: e.amax(), lambda: e.amin(1), lambda: e.argmax(), lambda: e.max(1), lambda: e.argmin(1)):
        with pytest.raises(ValueError):
            call()
    assert bm.softmax(e, 1).shape == (3, 0)


def test_half_types_accumulate_in_float32():
    # Summing in the storage type would stall at 2048 (float16) / 256 (bfloat16).
    for dt in (bm.float16, bm.bfloat16):
        ones = bm.ones(4096, dtype=dt)
        assert ones.sum().item() == 4096.0
        assert ones.reshape(64, 64).sum(0).tolist() == [64.0] * 64
        assert ones.mean().item() == 1.0
    h = RNG.standard_normal(10000).astype(np.float16)
    assert_close(bm.tensor(h).var(), np.var(h.astype(np.float64), ddof=1), 2e-3, 1e-3, check_dtype=False)


# ---- accuracy ----

def test_var_large_mean_accuracy():
    # A large mean kills the textbook sum-of-squares formula; two-pass must stay close to the
    # exact variance (float64 of the same float32 values), at least as close as numpy's float32.
    a = (1e4 + RNG.standard_normal(200_000)).astype(np.float32)
    exact = np.var(a.astype(np.float64), ddof=1)
    ours = bm.tensor(a).var().item()
    theirs = float(np.var(a, ddof=1))
    assert abs(ours - exact) / exact < 1e-4
    assert abs(ours - exact) <= max(2 * abs(theirs - exact), 1e-5 * exact)
    # same data as columns of a matrix (column mode) and as rows of a transposed view
    m = a.reshape(400, 500)
    exact_cols = np.var(m.astype(np.float64), axis=0, ddof=1)
    assert_close(bm.tensor(m).var(0), exact_cols, 1e-4, 0, check_dtype=False)
    assert_close(bm.tensor(m.T.copy()).T.var(0), exact_cols, 1e-4, 0, check_dtype=False)
    exact_rows = np.var(m.astype(np.float64), axis=1, ddof=1)
    assert_close(bm.tensor(m).var(1), exact_rows, 1e-4, 0, check_dtype=False)


@pytest.mark.parametrize("n", [1_000_003, 10_000_000])
def test_long_float32_sum_is_pairwise(n):
    # All-positive data: a naive float32 running sum drifts by ~1e-3 here; pairwise stays ~1e-7.
    a = RNG.random(n, dtype=np.float32)
    exact = a.astype(np.float64).sum()
    assert abs(bm.tensor(a).sum().item() - exact) / exact < 2e-6
    assert abs(bm.tensor(a).mean().item() - exact / n) / (exact / n) < 2e-6


def test_contiguous_and_strided_runs_sum_in_the_same_order():
    # The vectorised contiguous loop and the scalar strided loop combine in the same order.
    for n in (1, 17, 256, 1000, 70_001):
        a = RNG.standard_normal(n).astype(np.float32) * 1e3
        spread = np.zeros(2 * n, np.float32)
        spread[::2] = a
        x, xs = bm.tensor(a), bm.tensor(spread)[::2]
        assert x.sum().item() == xs.sum().item()
        assert x.amax().item() == xs.amax().item()
        d = a.astype(np.float64)
        assert bm.tensor(d).sum().item() == bm.tensor(np.repeat(d, 2))[::2].sum().item()
    # Rows (float32 sum and mean rows run in reduce_rows.cpp's per-instruction-set copies): nine
    # rows a size, so a different split or fold cannot match them all by chance.
    for n in (31, 257, 1000, 4099, 9000):
        m = RNG.standard_normal((9, n)).astype(np.float32) * 1e3
        spread = np.zeros((9, 2 * n), np.float32)
        spread[:, ::2] = m
        x, xs = bm.tensor(m), bm.tensor(spread)[:, ::2]
        assert np.array_equal(x.sum(-1).numpy(), xs.sum(-1).numpy()), n
        assert np.array_equal(x.mean(-1).numpy(), xs.mean(-1).numpy()), n


@pytest.mark.parametrize("n", [1, 5, 8, 15, 16, 17, 24, 31, 32, 33, 47, 64, 100, 255, 256, 257])
def test_short_rows_reduce_like_the_strided_loop(n):
    # Rows of at most 256 floats go 16 at a time through a butterfly (reduce_rows.cpp) that must add
    # in the per-row fold's order; amax/amin fall back per row for NaNs and zero results. 37 rows
    # (two batches and a remainder) with NaNs, signed zeros, infinities and subnormals, and a 3-D
    # view whose kept dims do not merge (the rows found by the Odometer), against the strided loop.
    a = (RNG.standard_normal((37, n)) * 100).astype(np.float32)
    a[3, n // 2] = np.nan
    a[5, :] = -0.0
    a[6, ::2] = 0.0
    a[7, :] = np.inf
    a[8, 0] = -np.inf
    a[9, :] = np.float32(1e-45) * np.where(np.arange(n) % 3 == 0, -1, 1)
    a3 = (RNG.standard_normal((6, 10, n)) * 100).astype(np.float32)
    for arr, pick in ((a, lambda t: t), (a3, lambda t: t[:, ::2])):
        spread = np.zeros(arr.shape[:-1] + (2 * n,), np.float32)
        spread[..., ::2] = arr
        x, xs = pick(bm.tensor(arr)), pick(bm.tensor(spread))[..., ::2]
        for op in ("sum", "mean", "amax", "amin"):
            got, want = getattr(x, op)(-1).numpy(), getattr(xs, op)(-1).numpy()
            assert np.array_equal(np.isnan(got), np.isnan(want)), (n, op)
            ok = ~np.isnan(want)
            assert np.array_equal(got[ok].view(np.int32), want[ok].view(np.int32)), (n, op)


def test_amax_amin_of_signed_zeros_keep_the_strided_order():
    # A zero extreme's sign depends on the order of the comparisons: the contiguous loops (which
    # take a one-pass shortcut when the extreme is not zero) must give the strided loop's zero.
    for n in (5, 300, 4096, 70_001):
        for pos_first in (False, True):
            a = -np.abs(RNG.standard_normal(n).astype(np.float32)) - np.float32(0.5)
            at = RNG.choice(n, size=min(n, 9), replace=False)
            a[at] = np.where(np.arange(at.size) % 2 == pos_first, np.float32(-0.0), np.float32(0.0))
            spread = np.zeros(2 * n, np.float32)
            spread[::2] = a
            for name, v in (("amax", a), ("amin", -a)):
                sp = spread if name == "amax" else -spread
                got = getattr(bm.tensor(v), name)().numpy()
                want = getattr(bm.tensor(sp)[::2], name)().numpy()
                assert got == 0 and np.signbit(got) == np.signbit(want), (n, name, pos_first)
                rows = getattr(bm.tensor(np.stack([v, v])), name)(-1).numpy()
                assert np.array_equal(np.signbit(rows), np.signbit([want, want])), (n, name)


def test_long_column_sums_are_blocked():
    a = RNG.random((200_000, 8), dtype=np.float32)
    exact = a.astype(np.float64).sum(0)
    assert_close(bm.tensor(a).sum(0), exact, 2e-6, 0, check_dtype=False)
    assert_close(bm.tensor(a.T.copy()).T.sum(0), exact, 2e-6, 0, check_dtype=False)


# ---- the large-shape code paths, against numpy in float64 ----

def layouts(shape):
    """(name, bessemer tensor, numpy float64 array) for several memory layouts of one shape."""
    base = RNG.standard_normal(shape).astype(np.float32)
    out = [("contiguous", bm.tensor(base), base.astype(np.float64))]
    perm = tuple(reversed(range(len(shape))))
    tb = np.ascontiguousarray(base.transpose(perm))
    out.append(("transposed", bm.tensor(tb).permute(*perm), base.astype(np.float64)))
    big = RNG.standard_normal(tuple(2 * s for s in shape)).astype(np.float32)
    sl = tuple(slice(None, None, 2) for _ in shape)
    out.append(("sliced", bm.tensor(big)[sl], big[sl].astype(np.float64)))
    return out


SHAPES_DIMS = [
    ((1000, 1000), [None, 0, 1]),
    ((64, 33, 70), [None, 0, 1, 2, (0, 2), (1, 2), (0, 1)]),
    ((300_000, 3), [0, 1]),
    ((3, 300_000), [0, 1]),
    ((2, 5, 40_000), [(0, 2), 1, (0, 1)]),
]


@pytest.mark.parametrize("shape,dims_list", SHAPES_DIMS, ids=[str(s) for s, _ in SHAPES_DIMS])
def test_large_reductions_all_paths(shape, dims_list):
    for name, x, a in layouts(shape):
        for d in dims_list:
            ax = d
            msg = f"{name} dims={d}"
            assert_close(x.sum(d), a.sum(axis=ax), 1e-5, 1e-3, check_dtype=False, msg=msg)
            assert_close(x.mean(d), a.mean(axis=ax), 1e-5, 1e-5, check_dtype=False, msg=msg)
            assert_close(x.var(d), a.var(axis=ax, ddof=1), 1e-4, 1e-5, check_dtype=False, msg=msg)
            assert_close(x.amax(() if d is None else d), a.max(axis=ax), 0, 0, check_dtype=False, msg=msg)
            assert_close(x.amin(() if d is None else d), a.min(axis=ax), 0, 0, check_dtype=False, msg=msg)
            if d is None or isinstance(d, int):
                assert np.array_equal(x.argmax(d).numpy(), a.argmax(axis=ax)), msg
                assert np.array_equal(x.argmin(d).numpy(), a.argmin(axis=ax)), msg


def test_large_int_and_double_paths():
    a = RNG.integers(-1000, 1000, (700, 900))
    x = bm.tensor(a)
    for d in (None, 0, 1):
        assert np.array_equal(x.sum(d).numpy(), a.sum(axis=d))
        assert np.array_equal(x.amax(() if d is None else d).numpy(), a.max(axis=d))
        assert np.array_equal(x.T.argmin(d).numpy(), a.T.argmin(axis=d))
    i32 = bm.tensor(a.astype(np.int32))
    assert np.array_equal(i32.amin(0).numpy(), a.min(0)) and i32.amin(0).dtype == bm.int32
    f = RNG.standard_normal((500, 700))
    xd = bm.tensor(f)
    for d in (None, 0, 1):
        assert_close(xd.sum(d), f.sum(axis=d), 1e-12, 1e-10)
        assert_close(xd.var(d), f.var(axis=d, ddof=1), 1e-12, 1e-12)
    # int64 sums wrap around like torch's
    big = np.array([2**62, 2**62, 2**62], dtype=np.int64)
    assert bm.tensor(big).sum().item() == torch.from_numpy(big).sum().item()


def test_argmax_long_runs_split_across_threads():
    # One long run is split in pieces for the threads; ties and NaN must still give the first index.
    n = 1_000_000
    a = np.zeros(n, dtype=np.float32)
    a[[700_000, 300_000, 999_999]] = 5.0
    assert bm.tensor(a).argmax().item() == 300_000
    a[[800_000, 600_000]] = np.nan
    assert bm.tensor(a).argmax().item() == 600_000 == torch.from_numpy(a).argmax().item()
    assert bm.tensor(a).argmin().item() == 600_000 == torch.from_numpy(a).argmin().item()
    assert bm.tensor(np.full(n, 2.0, np.float32)).argmin().item() == 0
    col = np.zeros((200_000, 2), dtype=np.float32)
    col[[150_000, 50_000], 1] = 1.0
    assert bm.tensor(col).argmax(0).tolist() == [0, 50_000]


@pytest.mark.parametrize("shape", [(500, 700), (3, 400_000), (400_000, 3), (2_000_000,)])
def test_results_do_not_depend_on_thread_count(shape):
    # Reductions are cut into pieces independently of the thread count: same bits for 1, 2, 3 threads.
    a = RNG.standard_normal(shape).astype(np.float32)
    x = bm.tensor(a)
    views = [x] if len(shape) == 1 else [x, x.T]
    before = bm.get_num_threads()
    try:
        got = []
        for n in (1, 2, 3):
            bm.set_num_threads(n)
            res = []
            for v in views:
                for d in range(v.ndim):
                    res += [v.sum(d), v.var(d), v.amax(d), v.argmax(d), bm.softmax(v, d)]
                res += [v.sum(), v.mean(), v.argmin()]
            got.append([r.numpy() for r in res])
        for other in got[1:]:
            for u, v in zip(got[0], other):
                assert np.array_equal(u, v, equal_nan=True)
    finally:
        bm.set_num_threads(before)


# ---- softmax ----

@pytest.mark.parametrize("log", [False, True])
def test_softmax_large_logits_do_not_overflow(log):
    a = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 88.0], [3e38, 3e38, 2e38]], dtype=np.float32)
    x, t = both(a)
    fn_b, fn_t = (bm.log_softmax, torch.log_softmax) if log else (bm.softmax, torch.softmax)
    r = fn_b(x, 1)
    assert np.isfinite(r.numpy()).all()
    close(r, fn_t(t, 1))
    close(fn_b(x.T, 0), fn_t(t.T, 0))


def test_softmax_inf_and_nan_like_torch():
    a = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf], [np.nan, 1.0, 2.0]], dtype=np.float32)
    x, t = both(a)
    for fb, ft in ((bm.softmax, torch.softmax), (bm.log_softmax, torch.log_softmax)):
        close(fb(x, 1), ft(t, 1))
        close(fb(x.T, 0), ft(t.T, 0))


@pytest.mark.parametrize("shape,dim", [((256, 4096), -1), ((4096, 33), 0), ((8, 300, 20), 1), ((5, 7), 0),
                                       ((100_000,), 0)])
def test_softmax_matches_torch_on_every_layout(shape, dim):
    for name, x, a in layouts(shape):
        t = torch.from_numpy(a)
        assert_close(bm.softmax(x, dim), torch.softmax(t, dim).numpy(), 1e-5, 1e-7, check_dtype=False, msg=name)
        assert_close(bm.log_softmax(x, dim), torch.log_softmax(t, dim).numpy(), 1e-5, 1e-5, check_dtype=False,
                     msg=name)


def test_softmax_half_types_compute_in_float32():
    a = (RNG.standard_normal((16, 300)) * 4).astype(np.float32)
    for dt, tdt, tol in ((bm.float16, torch.float16, 2e-3), (bm.bfloat16, torch.bfloat16, 1.6e-2)):
        x = bm.tensor(a, dtype=dt)
        t = torch.from_numpy(a).to(tdt)
        for fb, ft in ((bm.softmax, torch.softmax), (bm.log_softmax, torch.log_softmax)):
            r = fb(x, 1)
            assert r.dtype == dt
            assert_close(r, ft(t.float(), 1).numpy(), tol, tol, check_dtype=False)
        assert_close(bm.softmax(x, 0), torch.softmax(t.float(), 0).numpy(), tol, 1e-3, check_dtype=False)
