"""Reductions and softmax on the Metal devices (metal-sim on Linux) against NumPy float64 references.

Covers every layout of harness.make_input, dims None / 0 / -1 / (0, 2) with keepdim, each dtype a
row allows (float64 aside: Metal has none), NaN, argmax ties, var of data with a large mean,
softmax of large logits, both kernel shapes (one thread per output for short or column reductions,
one threadgroup per output with simd + threadgroup trees for long ones) and inputs with more dims
than a shader takes.

The test classes are instantiated once per non-cpu device (bm.available_devices()); metal-sim is
built on every platform, so there is always at least one.
"""

from __future__ import annotations

import numpy as np
import pytest

import bessemer as bm
from bessemer import _core
from bessemer.testing import assert_close
from harness import TOL, _np_storage, make_input, round_to

GPU_DEVICES = [str(d) for d in bm.available_devices() if d.type != "cpu"]

FL = [bm.float32, bm.float16, bm.bfloat16]
INT = [bm.int32, bm.int64]
LAYOUTS = ["contiguous", "transposed", "sliced", "offset", "broadcast", "0d"]
SHAPE = (4, 5, 6)  # every layout but 0d keeps this logical shape
REDUCE_DTYPES = {
    "sum": FL + INT + [bm.bool],
    "mean": FL,
    "var": FL,
    "amax": FL + INT + [bm.bool],
    "amin": FL + INT + [bm.bool],
    "argmax": FL + INT,
    "argmin": FL + INT,
}


def test_there_is_a_metal_device():
    assert "metal-sim:0" in GPU_DEVICES


# ---- NumPy references (float64 values, int64/bool for the others) ----


def _axis(dim, ndim):
    if ndim == 0 or dim is None:
        return None
    return dim


def np_var(v, axis, keepdim, correction=1):
    v = np.asarray(v, dtype=np.float64)
    n = v.size if axis is None else int(np.prod([v.shape[a] for a in np.atleast_1d(axis)]))
    mu = v.mean(axis=axis, keepdims=True)
    m2 = ((v - mu) ** 2).sum(axis=axis, keepdims=keepdim)
    with np.errstate(all="ignore"):
        return m2 / max(n - correction, 0)


def reference(op, v, dim, keepdim, correction=1):
    axis = _axis(dim, v.ndim)
    keep = keepdim and v.ndim > 0
    if op == "sum":
        r = np.sum(v, axis=axis, keepdims=keep)
        return r.astype(np.int64) if v.dtype.kind in "bi" else r
    if op == "mean":
        return np.mean(v, axis=axis, keepdims=keep)
    if op == "var":
        return np_var(v, axis, keep, correction)
    if op in ("amax", "amin"):
        return (np.max if op == "amax" else np.min)(v, axis=axis, keepdims=keep)
    return (np.argmax if op == "argmax" else np.argmin)(v, axis=axis, keepdims=keep)


def ours(op, t, dim, keepdim, correction=1):
    if op == "var":
        return bm.var(t, dim, correction=correction, keepdim=keepdim)
    return getattr(bm, op)(t, dim, keepdim=keepdim)


def np_softmax(v, dim, log=False):
    v = np.asarray(v, dtype=np.float64)
    with np.errstate(all="ignore"):
        z = v - np.max(v, axis=dim, keepdims=True)
        lse = np.log(np.sum(np.exp(z), axis=dim, keepdims=True))
        return z - lse if log else np.exp(z - lse)


def out_dtype(op, dtype):
    if op in ("argmax", "argmin"):
        return bm.int64
    if op == "sum" and dtype not in FL:
        return bm.int64
    return dtype


def tensor(values, dtype, device):
    return bm.tensor(_np_storage(np.asarray(values), dtype), dtype=dtype, device=device)


def check(actual, expected, dtype, device, rtol=None, atol=None):
    assert str(actual.device) == device
    r, a = TOL[actual.dtype]
    assert_close(
        actual, np.asarray(expected), r if rtol is None else rtol, a if atol is None else atol, check_dtype=False
    )


def check_reduce(op, t, v, dim, keepdim, device, correction=1, **tol):
    r = ours(op, t, dim, keepdim, correction)
    assert r.dtype == out_dtype(op, t.dtype), (op, r.dtype)
    with np.errstate(all="ignore"):  # inf - inf in the NaN tests
        expected = reference(op, v, dim, keepdim, correction)
    check(r, expected, t.dtype, device, **tol)


class _MetalReduceTests:
    device: str

    # ---- every layout x dims x keepdim x dtype ----

    @pytest.mark.parametrize("layout", LAYOUTS)
    @pytest.mark.parametrize(
        "op,dtype",
        [(op, d) for op, ds in REDUCE_DTYPES.items() for d in ds],
        ids=lambda x: x if isinstance(x, str) else x.name,
    )
    def test_reduce_layouts(self, op, dtype, layout):
        t, v = make_input(SHAPE, dtype, self.device, layout, np.random.default_rng(1))
        if layout == "0d":
            dims = [None, 0, -1]
        elif op in ("argmax", "argmin"):
            dims = [None, 0, 1, -1]
        else:
            dims = [None, 0, -1, (0, 2), (2, 0, 1)]
        for dim in dims:
            for keepdim in (False, True):
                check_reduce(op, t, v, dim, keepdim, self.device)

    @pytest.mark.parametrize("layout", LAYOUTS)
    @pytest.mark.parametrize("dtype", FL, ids=lambda d: d.name)
    @pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
    def test_softmax_layouts(self, log, dtype, layout):
        t, v = make_input(SHAPE, dtype, self.device, layout, np.random.default_rng(2))
        fn = bm.log_softmax if log else bm.softmax
        for dim in [0, -1] if layout == "0d" else [0, 1, -1]:
            r = fn(t, dim)
            assert r.dtype == dtype and r.shape == t.shape
            check(r, np_softmax(v, None if v.ndim == 0 else dim, log), dtype, self.device)

    # ---- the threadgroup kernels: reductions longer than one threadgroup ----

    @pytest.mark.parametrize(
        "op,dtype",
        [(op, d) for op, ds in REDUCE_DTYPES.items() for d in (bm.float32, bm.float16, bm.int32) if d in ds],
        ids=lambda x: x if isinstance(x, str) else x.name,
    )
    def test_long_reductions(self, op, dtype):
        rng = np.random.default_rng(3)
        t, v = make_input((2, 3000), dtype, self.device, "contiguous", rng)
        check_reduce(op, t, v, -1, False, self.device)  # contiguous rows, 256 threads each
        check_reduce(op, t.T, v.T, 0, True, self.device)  # one strided reduced dim
        check_reduce(op, t, v, None, False, self.device)  # everything, one group
        # several reduced dims that do not merge (index math per element), 7 outputs
        t3, v3 = make_input((30, 7, 20), dtype, self.device, "sliced", rng)
        if op not in ("argmax", "argmin"):
            check_reduce(op, t3, v3, (0, 2), False, self.device)
        check_reduce(op, t3, v3, 1, False, self.device)

    @pytest.mark.parametrize(
        "op,dtype",
        [(op, d) for op, ds in REDUCE_DTYPES.items() for d in (bm.float32, bm.bfloat16, bm.int64) if d in ds],
        ids=lambda x: x if isinstance(x, str) else x.name,
    )
    def test_split_reductions(self, op, dtype):
        # few outputs, long reductions: several threadgroups per output write partial states,
        # then one thread per output merges them
        t, v = make_input((2, 20000), dtype, self.device, "contiguous", np.random.default_rng(11))
        check_reduce(op, t, v, -1, True, self.device)  # 4 chunks per row
        check_reduce(op, t, v, None, False, self.device)  # 9 chunks
        check_reduce(op, t.T, v.T, 0, False, self.device)  # strided chunks

    @pytest.mark.parametrize(
        "op,dtype",
        [(op, d) for op, ds in REDUCE_DTYPES.items() for d in (bm.float32, bm.float16, bm.int64) if d in ds],
        ids=lambda x: x if isinstance(x, str) else x.name,
    )
    def test_column_split_reductions(self, op, dtype):
        # many outputs side by side in memory, long columns: several threads per output reduce a
        # chunk of rows each (reduce_*_column), one thread per output merges (var: one thread per
        # output, no split)
        rng = np.random.default_rng(13)
        t, v = make_input((300, 2200), dtype, self.device, "contiguous", rng)
        ts, vs = t[:, ::2], v[:, ::2]  # 1100 outputs 2 apart, rows 2200 apart
        bm.synchronize(self.device)
        _core.reset_queue_stats(self.device)
        check_reduce(op, ts, vs, 0, False, self.device)
        assert _core.queue_stats(self.device)["dispatches"] == (1 if op == "var" else 2), op
        # two step-sliced reduced dims, the outputs innermost
        t3, v3 = make_input((6, 50, 1030), dtype, self.device, "contiguous", rng)
        # 150 float32 terms of |x| < 8 summed in two chunks: rounding up to ~1e-4 where they cancel
        tol = {"atol": 2e-4} if dtype == bm.float32 else {}
        dims = 1 if op in ("argmax", "argmin") else (0, 1)  # arg ops take one dim: 6 x 1030 columns of 25
        check_reduce(op, t3[:, ::2], v3[:, ::2], dims, True, self.device, **tol)
        if op != "var":  # ties (and NaN for floats) in different chunks: the first index wins
            w = np.zeros((500, 1024))
            w[[70, 300, 499], 5] = 2
            w[[10, 200], 9] = np.nan if dtype != bm.int64 else -3
            tw = tensor(w, dtype, self.device)
            check_reduce(op, tw, w.astype(np.float64), 0, False, self.device)

    @pytest.mark.parametrize(
        "shape,dim,launches",
        [((2, 20000), -1, 2), ((2, 20000), None, 2), ((2, 3000), -1, 1), ((70, 8192), -1, 1), ((2, 40), -1, 1)],
    )
    def test_split_only_when_few_outputs_and_long(self, shape, dim, launches):
        t, _ = make_input(shape, bm.float32, self.device, "contiguous", np.random.default_rng(12))
        for op in ("sum", "var", "argmax"):
            bm.synchronize(self.device)
            _core.reset_queue_stats(self.device)
            ours(op, t, dim, False)
            assert _core.queue_stats(self.device)["dispatches"] == launches, op

    def test_split_reductions_ties_and_nan(self):
        n = 20000  # chunks of 5000 per row
        w = np.zeros((4, n))
        w[0, [17000, 6000, 9999]] = 3  # ties in chunks 1 and 3: the first wins
        w[1, [4999, 5000]] = -3
        w[2, 12345], w[2, 19999] = np.nan, np.nan
        w[3, :] = 1.0
        t = tensor(w, bm.float32, self.device)
        assert bm.argmax(t, 1).tolist() == [6000, 0, 12345, 0]
        assert bm.argmin(t, 1).tolist() == [0, 4999, 12345, 0]
        for op in REDUCE_DTYPES:
            check_reduce(op, t, w, 1, False, self.device)

    @pytest.mark.parametrize("op", list(REDUCE_DTYPES))
    def test_column_reductions(self, op):
        # many outputs side by side in memory: one thread per output walking down the column
        dtype = bm.float32 if op in ("mean", "var") else bm.int32
        t, v = make_input((40, 1100), dtype, self.device, "contiguous", np.random.default_rng(4))
        check_reduce(op, t, v, 0, False, self.device)
        t3, v3 = make_input((3, 40, 1030), bm.float32, self.device, "contiguous", np.random.default_rng(5))
        if op not in ("argmax", "argmin"):
            check_reduce(op, t3, v3, (0, 1), True, self.device)

    # ---- NaN, ties, accuracy ----

    @pytest.mark.parametrize("dtype", FL, ids=lambda d: d.name)
    @pytest.mark.parametrize("n", [7, 3000])
    def test_nan_propagates(self, dtype, n):
        rng = np.random.default_rng(6)
        v = round_to(rng.standard_normal((4, n)), dtype)
        v[1, n // 2] = np.nan
        v[2, 3] = v[2, n - 1] = np.nan  # argmax/argmin: the first NaN
        v[3, 1], v[3, 2] = np.inf, -np.inf
        v[3, n - 2] = np.nan
        t = tensor(v, dtype, self.device)
        for op in REDUCE_DTYPES:
            check_reduce(op, t, v, -1, False, self.device)
        for op in ("amax", "argmax", "sum"):
            check_reduce(op, t.T, v.T, 0, False, self.device)
        for log in (False, True):
            check((bm.log_softmax if log else bm.softmax)(t, -1), np_softmax(v, -1, log), dtype, self.device)

    @pytest.mark.parametrize("dtype", [bm.float32, bm.bfloat16, bm.int32, bm.int64], ids=lambda d: d.name)
    def test_argmax_ties_pick_the_first(self, dtype):
        v = np.array([[1, 3, 3, 2, 3], [2, 2, 2, 2, 2], [0, -4, 1, -4, -4]])
        t = tensor(v, dtype, self.device)
        assert bm.argmax(t, 1).tolist() == [1, 0, 2]
        assert bm.argmin(t, 1).tolist() == [0, 0, 1]
        assert bm.argmax(t).item() == 1 and bm.argmin(t).item() == 11
        # long rows: the first extreme sits in a higher thread than a later one (1000 -> thread
        # 232, 1030 -> thread 6 of 256), so the tree must compare indices, not lanes
        n = 3000
        w = np.zeros((3, n))
        w[0, [1000, 1030, 2999]] = 5
        w[1, [1030, 1000]] = -5
        w[2, :] = 7
        tw = tensor(w, dtype, self.device)
        assert bm.argmax(tw, 1).tolist() == [1000, 0, 0]
        assert bm.argmin(tw, 1).tolist() == [0, 1000, 0]
        assert bm.argmax(tw.T, 0).tolist() == [1000, 0, 0]
        assert bm.argmax(tw).item() == 2 * n  # flattened: the first 7 (row 2) beats 5
        assert bm.argmin(tw).item() == n + 1000

    @pytest.mark.parametrize("n", [20, 3000, 20000])
    @pytest.mark.parametrize("mean", [1e4, 1e6])
    def test_var_large_mean(self, n, mean):
        v = round_to(mean + np.random.default_rng(7).standard_normal((3, n)), bm.float32)
        t = tensor(v, bm.float32, self.device)
        for c in (0, 1):
            check_reduce("var", t, v, -1, False, self.device, correction=c)
            check_reduce("var", t.T, v.T, 0, False, self.device, correction=c)
        check_reduce("mean", t, v, None, False, self.device)

    def test_var_correction_at_and_past_n(self):
        v = np.array([[1.0, 2.0], [3.0, 3.0]])
        t = tensor(v, bm.float32, self.device)
        for c in (0, 0.5, 1, 2, 3):  # N - correction <= 0: inf, or nan when every value is equal
            check_reduce("var", t, v, 1, False, self.device, correction=c)
        long_v = np.ones((2, 40))
        long_v[0, 0] = 2.0
        t = tensor(long_v, bm.float32, self.device)
        check_reduce("var", t, long_v, 1, False, self.device, correction=40)

    @pytest.mark.parametrize("n", [5, 50, 3000])
    def test_softmax_large_logits(self, n):
        rng = np.random.default_rng(8)
        v = round_to(rng.standard_normal((3, n)) * 1000, bm.float32)
        v[1, :] += 1e4  # exp(x) overflows float32 beyond ~88 unless the maximum is subtracted first
        v[2, 1:] = -np.inf  # masked logits: 0 probability; a single finite one gets it all
        v = round_to(v, bm.float32)
        t = tensor(v, bm.float32, self.device)
        for log in (False, True):
            fn = bm.log_softmax if log else bm.softmax
            check(fn(t, -1), np_softmax(v, -1, log), bm.float32, self.device)
            check(fn(t.T, 0), np_softmax(v.T, 0, log), bm.float32, self.device)
        r = bm.softmax(t, -1).numpy()
        assert np.all(np.isfinite(r)) and np.allclose(r.sum(-1), 1.0)
        allmasked = tensor(np.full((2, n), -np.inf), bm.float32, self.device)
        assert np.all(np.isnan(bm.softmax(allmasked, -1).numpy()))  # as torch: 0/0

    @pytest.mark.parametrize("shape,dim", [((3, 3000), -1), ((2000, 3), 0), ((40, 1100), 0), ((7, 33), 1)])
    def test_softmax_long_and_column(self, shape, dim):
        t, v = make_input(shape, bm.float32, self.device, "contiguous", np.random.default_rng(9))
        for log in (False, True):
            check((bm.log_softmax if log else bm.softmax)(t, dim), np_softmax(v, dim, log), bm.float32, self.device)

    # ---- more dims than a shader takes (BM_MAX_DIMS = 8), empty inputs ----

    def test_more_dims_than_a_kernel_takes(self):
        # step slices keep every one of the 10 dims from merging with its neighbours
        base, vb = make_input((3,) * 10, bm.float32, self.device, "contiguous", np.random.default_rng(10))
        idx = (slice(None, None, 2),) * 10
        t, v = base[idx], vb[idx]
        check_reduce("sum", t, v, None, False, self.device)  # 10 reduced dims: copied first
        check_reduce("sum", t, v, 0, True, self.device)  # 9 kept dims: one launch per outer index
        check_reduce("amax", t, v, tuple(range(1, 10)), False, self.device)
        check_reduce("var", t, v, (0, 2, 4, 6, 8), False, self.device)
        check_reduce("argmax", t, v, 3, False, self.device)
        check(bm.softmax(t, 4), np_softmax(v, 4), bm.float32, self.device)

    def test_empty_inputs(self):
        e = bm.zeros(0, 3, device=self.device)
        assert bm.sum(e, 0).tolist() == [0.0, 0.0, 0.0]
        assert np.all(np.isnan(bm.mean(e, 0).numpy()))
        assert bm.softmax(e, 1).shape == (0, 3) and bm.log_softmax(e, 0).shape == (0, 3)


for _device in GPU_DEVICES:
    _name = "TestOn_" + _device.replace("-", "_").replace(":", "_")
    globals()[_name] = type(_name, (_MetalReduceTests,), {"device": _device})
