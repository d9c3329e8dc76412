"""matmul beyond the op table: errors, K == 0, every BLAS operand layout (in place or copied),
batch folding, and the blocked fallback kernel on sizes that cross its cache blocks. Every test runs
on every device; on Metal the same cases exercise the tiled kernel (edge tiles, strided loads, merged
and folded batch dims)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import bessemer as bm
from bessemer.testing import assert_close
from harness import DEVICES, FLOATS, INTS, NUMPY_DTYPE, TOL, _np_storage, dtypes_on, random_values, wrap_to


def rand(shape, dtype=bm.float32, seed=0, device="cpu"):
    """(bessemer tensor, float64/int64 numpy values) with values exact in `dtype`."""
    vals = random_values(shape, dtype, np.random.default_rng(seed))
    return bm.tensor(_np_storage(vals, dtype), dtype=dtype, device=device), vals


def device_dtypes(dtypes):
    """(device, dtype) pairs for every device, float64 on cpu only."""
    return [(d, t) for d in DEVICES for t in dtypes_on(d, dtypes)]


# ---- errors ----

@pytest.mark.parametrize("sa,sb", [((3, 4), (5, 6)), ((4,), (5,)), ((2, 3, 4), (2, 5, 6)), ((3,), (4, 2)),
                                   ((2, 3, 4), (3, 4, 5))])
@pytest.mark.parametrize("device", DEVICES)
def test_shape_error_names_op_and_both_shapes(sa, sb, device):
    a, b = bm.zeros(*sa, device=device), bm.zeros(*sb, device=device)
    with pytest.raises(ValueError) as e:
        bm.matmul(a, b)
    msg = str(e.value)
    assert msg.startswith("[matmul]")
    assert str(tuple(sa)) in msg and str(tuple(sb)) in msg, msg


@pytest.mark.parametrize("sa,sb", [((), (3,)), ((3,), ()), ((), ())])
@pytest.mark.parametrize("device", DEVICES)
def test_zero_dim_inputs_raise(sa, sb, device):
    a = bm.tensor(2.0, device=device) if sa == () else bm.ones(*sa, device=device)
    b = bm.tensor(3.0, device=device) if sb == () else bm.ones(*sb, device=device)
    with pytest.raises(ValueError, match=r"\[matmul\].*at least 1 dim"):
        a @ b


# ---- K == 0: an empty sum is zero ----

@pytest.mark.parametrize("device,dtype", device_dtypes(FLOATS + INTS))
@pytest.mark.parametrize("sa,sb,want", [((3, 0), (0, 5), (3, 5)), ((0,), (0,), ()), ((2, 3, 0), (0, 4), (2, 3, 4)),
                                        ((0,), (0, 2), (2,))])
def test_k_zero_gives_zeros(device, dtype, sa, sb, want):
    r = bm.matmul(bm.zeros(*sa, dtype=dtype, device=device), bm.zeros(*sb, dtype=dtype, device=device))
    assert r.shape == want and r.dtype == dtype
    assert np.all(np.asarray(r.to(bm.float32).numpy()) == 0)


@pytest.mark.parametrize("sa,sb", [((0, 4), (4, 5)), ((3, 4), (4, 0)), ((0, 3, 4), (4, 2))])
@pytest.mark.parametrize("device", DEVICES)
def test_empty_result(sa, sb, device):
    r = bm.matmul(bm.ones(*sa, device=device), bm.ones(*sb, device=device))
    assert r.shape == np.matmul(np.ones(sa), np.ones(sb)).shape


# ---- strided operands: BLAS in place (transposed), or copied (step slices, zero strides) ----

def views(t, v):
    """Named views of a 2-D matrix with the same values as (t, v) but different strides."""
    m, n = v.shape
    dev = t.device
    tt = bm.tensor(np.ascontiguousarray(v.T).astype(np.float64), dtype=t.dtype, device=dev)
    big = np.zeros((2 * m + 1, 3 * n + 2))
    big[1::2, 2::3] = v
    tb = bm.tensor(big, dtype=t.dtype, device=dev)
    wide = np.zeros((m, n + 7))  # row stride larger than the row: a leading dimension
    wide[:, 3:3 + n] = v
    tw = bm.tensor(wide, dtype=t.dtype, device=dev)
    return {
        "contiguous": t,
        "transposed": tt.T,                  # column-major: BLAS transpose flag, no copy
        "step_sliced": tb[1::2, 2::3],       # inner stride 3: copied
        "leading_dim": tw[:, 3:3 + n],       # row stride n + 7: in place with lda
        "leading_dim_T": bm.tensor(np.ascontiguousarray(wide.T), dtype=t.dtype, device=dev)[3:3 + n].T,
    }


@pytest.mark.parametrize("device,dtype", device_dtypes([bm.float32, bm.float64, bm.float16, bm.int64]))
@pytest.mark.parametrize("la", ["contiguous", "transposed", "step_sliced", "leading_dim", "leading_dim_T"])
@pytest.mark.parametrize("lb", ["contiguous", "transposed", "step_sliced", "leading_dim", "leading_dim_T"])
def test_strided_operands(device, dtype, la, lb):
    ta, va = rand((6, 9), dtype, seed=1, device=device)
    tb, vb = rand((9, 5), dtype, seed=2, device=device)
    a, b = views(ta, va)[la], views(tb, vb)[lb]
    assert_close(a, va, 0, 0)  # the views hold the intended values
    assert_close(b, vb, 0, 0)
    r = a @ b
    assert r.dtype == dtype and r.is_contiguous()
    assert_close(r, va @ vb, *TOL[dtype])


@pytest.mark.parametrize("device,dtype", device_dtypes([bm.float32, bm.float16]))
def test_zero_stride_matrices(device, dtype):
    # every row of a is the same row (row stride 0), every column of b the same column
    ra, vra = rand((1, 7), dtype, seed=3, device=device)
    cb, vcb = rand((7, 1), dtype, seed=4, device=device)
    a, b = ra.expand(5, 7), cb.expand(7, 4)
    assert a.stride() == (0, 1) and b.stride()[1] == 0
    assert_close(a @ b, np.broadcast_to(vra, (5, 7)) @ np.broadcast_to(vcb, (7, 4)), *TOL[dtype])


@pytest.mark.parametrize("device,dtype", device_dtypes([bm.float32, bm.float64, bm.int32]))
def test_batched_permuted_and_broadcast(device, dtype):
    ta, va = rand((3, 4, 6, 5), dtype, seed=5, device=device)  # viewed as (4, 3, 5, 6): permuted batch, transposed
    tb, vb = rand((3, 6, 2), dtype, seed=6, device=device)  # broadcast over the leading batch dim
    a, a_np = ta.permute(1, 0, 3, 2), va.transpose(1, 0, 3, 2)
    assert_close(a @ tb, a_np @ vb, *TOL[dtype])
    # a broadcast along a batch dim (zero batch stride) against a batched b
    tc, vc = rand((5, 6), dtype, seed=7, device=device)
    tbb, vbb = rand((4, 3, 6, 2), dtype, seed=8, device=device)
    assert_close(tc @ tbb, vc @ vbb, *TOL[dtype])


@pytest.mark.parametrize("device,dtype", device_dtypes([bm.float32, bm.float64]))
@pytest.mark.parametrize("layout", ["contiguous", "sliced_batch", "transposed"])
def test_shared_weight_batches(device, dtype, layout):
    # b shared by every batch entry (nn.Linear on (B, T, C)): contiguous batches fold into one gemm
    ta, va = rand((4, 3, 10, 7), dtype, seed=9, device=device)
    tb, vb = rand((7, 6), dtype, seed=10, device=device)
    if layout == "sliced_batch":  # batch dims that do not merge with the rows
        ta, va = ta[:, ::2], va[:, ::2]
    elif layout == "transposed":
        ta, va = rand((4, 3, 7, 10), dtype, seed=11, device=device)
        ta, va = ta.transpose(-1, -2), va.swapaxes(-1, -2)
    assert_close(ta @ tb, va @ vb, *TOL[dtype])
    assert_close(ta @ tb.expand(*ta.shape[:2], 7, 6), va @ vb, *TOL[dtype])


# ---- the blocked fallback: sizes crossing its 32-row, 128-deep and 256-wide blocks ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,rtol,atol", [(bm.float16, 2e-3, 2e-2), (bm.bfloat16, 1.6e-2, 1e-1)])
def test_half_fallback_large(device, dtype, rtol, atol):
    rng = np.random.default_rng(12)
    a32 = rng.uniform(-1, 1, (257, 129)).astype(np.float32)
    b32 = rng.uniform(-1, 1, (129, 65)).astype(np.float32)
    a = bm.tensor(a32, dtype=bm.float32, device=device).to(dtype)
    b = bm.tensor(b32, dtype=bm.float32, device=device).to(dtype)
    # reference: the same rounded inputs multiplied in float32; ours accumulates in float32 and
    # rounds once, so the only difference is the final rounding to the half type
    want = np.asarray(a.to(bm.float32).numpy()) @ np.asarray(b.to(bm.float32).numpy())
    r = a @ b
    assert r.dtype == dtype
    assert_close(r, want, rtol, atol)


@pytest.mark.parametrize("device", DEVICES)
def test_float16_fallback_wide_and_deep(device):
    rng = np.random.default_rng(13)
    a16 = rng.uniform(-1, 1, (37, 300)).astype(np.float16)
    b16 = rng.uniform(-1, 1, (300, 270)).astype(np.float16)
    want = a16.astype(np.float32) @ b16.astype(np.float32)
    assert_close(bm.tensor(a16, device=device) @ bm.tensor(b16, device=device), want, 2e-3, 2e-2)
    # transposed and sliced inputs take the same kernel with other strides
    at = bm.tensor(np.ascontiguousarray(a16.T), device=device).T
    bs = bm.tensor(np.repeat(b16, 2, axis=1), device=device)[:, ::2]
    assert_close(at @ bs, want, 2e-3, 2e-2)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", INTS)
def test_int_matmul_exact(device, dtype):
    rng = np.random.default_rng(14)
    def stored(v):  # the values as the dtype holds them (uint8 wraps negatives, as torch)
        return v.astype(NUMPY_DTYPE[dtype]).astype(np.int64)

    va = stored(rng.integers(-50, 50, (37, 300)))
    vb = stored(rng.integers(-50, 50, (300, 270)))
    a, b = bm.tensor(va, dtype=dtype, device=device), bm.tensor(vb, dtype=dtype, device=device)
    r = a @ b
    assert r.dtype == dtype
    np.testing.assert_array_equal(np.asarray(r.numpy()), wrap_to(va @ vb, dtype))  # int8... sums wrap
    # many small batch entries: the batch-parallel path, with b broadcast (packed once)
    vc = stored(rng.integers(-9, 9, (40, 5, 7)))
    vd = stored(rng.integers(-9, 9, (7, 3)))
    r = bm.tensor(vc, dtype=dtype, device=device) @ bm.tensor(vd, dtype=dtype, device=device)
    np.testing.assert_array_equal(np.asarray(r.numpy()), wrap_to(vc @ vd, dtype))


@pytest.mark.parametrize("device", DEVICES)
def test_int64_beyond_int32_range(device):
    va = np.array([[3_000_000_000, 1], [2, -5_000_000_000]], dtype=np.int64)
    vb = np.array([[2, 1], [7, 3]], dtype=np.int64)
    r = bm.tensor(va, device=device) @ bm.tensor(vb, device=device)
    np.testing.assert_array_equal(np.asarray(r.numpy()), va @ vb)


# ---- BLAS path sizes and the operator ----

@pytest.mark.parametrize("device,dtype", device_dtypes([bm.float32, bm.float64]))
def test_blas_large(device, dtype):
    ta, va = rand((257, 129), dtype, seed=15, device=device)
    tb, vb = rand((129, 65), dtype, seed=16, device=device)
    rtol, atol = (1e-4, 1e-4) if dtype == bm.float32 else (1e-10, 1e-10)
    assert_close(ta @ tb, va @ vb, rtol, atol)
    assert_close(ta.T.contiguous().T @ tb, va @ vb, rtol, atol)


# x @ w.T with few rows (nn.Linear at a small batch): on the cpu, float32 with 2-16 rows takes the
# dot-product kernel (csrc/cpu/gemm_nt.cpp; k of 7, 33 and 48 for its 16-lane tails), and up to 64
# rows (float64 from 2) turn into w @ x.T with the result transposed (csrc/cpu/blas.cpp); the
# operands in place with leading dimensions.
@pytest.mark.parametrize("device,dtype", device_dtypes([bm.float32, bm.float64]))
@pytest.mark.parametrize("m,k", [(2, 33), (5, 7), (8, 48), (16, 33), (17, 33), (64, 33)])
@pytest.mark.parametrize("la", ["contiguous", "leading_dim"])
@pytest.mark.parametrize("lb", ["transposed", "leading_dim_T"])
def test_few_rows_times_transposed(device, dtype, m, k, la, lb):
    ta, va = rand((m, k), dtype, seed=19, device=device)
    tb, vb = rand((k, 300), dtype, seed=20, device=device)
    a, b = views(ta, va)[la], views(tb, vb)[lb]
    rtol, atol = (1e-5, 1e-5) if dtype == bm.float32 else (1e-12, 1e-12)
    assert_close(a @ b, va @ vb, rtol, atol)
    w = views(tb, vb)["transposed"].T  # (300, 33) contiguous: linear's weight
    bias = bm.tensor(np.arange(300, dtype=np.float64), dtype=dtype, device=device)
    assert_close(bm.nn.functional.linear(a, w, bias), va @ vb + np.arange(300), rtol, atol)


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_operator_and_function_agree(device):
    ta, va = rand((2, 3, 4), seed=17, device=device)
    tb, vb = rand((4,), seed=18, device=device)
    r = ta @ tb
    assert r.shape == (2, 3)
    assert_close(r, va @ vb, *TOL[bm.float32])
    assert_close(bm.matmul(ta, tb), r, 0, 0)
    assert_close(tb @ tb, vb @ vb, *TOL[bm.float32])
    assert (tb @ tb).shape == ()


@pytest.mark.parametrize("device", DEVICES)
def test_nan_and_inf_propagate(device):
    a = bm.tensor(np.array([[np.nan, 1.0], [1.0, 1.0], [np.inf, 0.0]], dtype=np.float32), device=device)
    b = bm.tensor(np.array([[1.0], [2.0]], dtype=np.float32), device=device)
    r = np.asarray((a @ b).numpy())
    assert np.isnan(r[0, 0]) and r[1, 0] == 3.0 and np.isinf(r[2, 0])
    h = (a.to(bm.float16) @ b.to(bm.float16)).to(bm.float32).numpy()
    assert np.isnan(h[0, 0]) and h[1, 0] == 3.0 and np.isinf(h[2, 0])


@pytest.mark.parametrize("device", DEVICES)
def test_int32_overflow_wraps_like_torch_and_numpy(device):
    va = np.array([[2**30, 2**30, 7]], dtype=np.int32)
    vb = np.array([[2], [2], [1]], dtype=np.int32)
    r = bm.tensor(va, device=device) @ bm.tensor(vb, device=device)
    np.testing.assert_array_equal(np.asarray(r.numpy()), va @ vb)  # 2**32 + 7 wraps to 7
    assert int(r.numpy()[0, 0]) == 7


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [bm.float16, bm.bfloat16])
def test_half_types_accumulate_in_float32(device, dtype):
    # a float16 running sum of ones stalls at 2048 (bfloat16: 256); float32 reaches 2560, exact in both
    r = bm.ones(1, 2560, dtype=dtype, device=device) @ bm.ones(2560, 1, dtype=dtype, device=device)
    assert float(r.to(bm.float32).numpy()[0, 0]) == 2560.0


# ---- sizes past one tile in every dim (Metal: 32 x 32 out tiles, K in steps of 16), none a multiple ----

def strided(t, v, layout):
    """t (a bessemer matrix batch) and its values v re-laid out: transposed storage or a step slice."""
    if layout == "transposed":
        tt = np.ascontiguousarray(np.swapaxes(v, -1, -2))
        return bm.tensor(_np_storage(tt, t.dtype), dtype=t.dtype, device=t.device).transpose(-1, -2)
    if layout == "sliced":
        big = np.zeros(v.shape[:-1] + (2 * v.shape[-1],))
        big[..., 1::2] = v
        return bm.tensor(_np_storage(big, t.dtype), dtype=t.dtype, device=t.device)[..., 1::2]
    return t


@pytest.mark.parametrize("device,dtype", device_dtypes(FLOATS + INTS))
@pytest.mark.parametrize("la,lb", [("contiguous", "contiguous"), ("transposed", "sliced"), ("sliced", "transposed")])
def test_partial_tiles_in_every_dim(device, dtype, la, lb):
    ta, va = rand((37, 53), dtype, seed=19, device=device)
    tb, vb = rand((53, 41), dtype, seed=20, device=device)
    a, b = strided(ta, va, la), strided(tb, vb, lb)
    r = a @ b
    assert r.shape == (37, 41) and r.dtype == dtype
    assert_close(r, wrap_to(va @ vb, dtype), *TOL[dtype])


@pytest.mark.parametrize("device,dtype", device_dtypes([bm.float32, bm.int64]))
@pytest.mark.parametrize("sa,sb", [((33, 1), (1, 65)), ((1, 70), (70, 1)), ((1, 17), (17, 33)), ((65, 17), (17, 1))])
def test_thin_shapes(device, dtype, sa, sb):
    # K == 1 (an outer product), a dot product deeper than several K steps, single rows and columns
    ta, va = rand(sa, dtype, seed=27, device=device)
    tb, vb = rand(sb, dtype, seed=28, device=device)
    assert_close(ta @ tb, va @ vb, *TOL[dtype])


@pytest.mark.parametrize("device,dtype", device_dtypes([bm.float32, bm.float16, bm.int32]))
def test_batched_broadcast_partial_tiles(device, dtype):
    # batch (2, 3): a broadcast along dim 1, b along dim 0 (zero batch strides on both sides)
    ta, va = rand((2, 1, 37, 53), dtype, seed=21, device=device)
    tb, vb = rand((3, 53, 41), dtype, seed=22, device=device)
    assert_close(ta @ tb, va @ vb, *TOL[dtype])
    # the same with a transposed a and a b whose batch dim is a step slice
    at = strided(ta, va, "transposed")
    big = bm.tensor(_np_storage(np.concatenate([vb, vb]), dtype), dtype=dtype, device=device)
    assert_close(at @ big[::2], va @ np.concatenate([vb, vb])[::2], *TOL[dtype])


@pytest.mark.parametrize("device", DEVICES)
def test_many_unmergeable_batch_dims(device):
    # 9 batch dims in reversed memory order: none merge with out's, more than a Metal launch's 8
    ta, va = rand((2,) * 9 + (3, 4), bm.float32, seed=23, device=device)
    perm = tuple(range(8, -1, -1)) + (9, 10)
    a, a_np = ta.permute(*perm), va.transpose(perm)
    tb, vb = rand((2, 1) * 4 + (2, 4, 5), bm.float32, seed=24, device=device)  # broadcast on every other dim
    assert_close(a @ tb, a_np @ vb, *TOL[bm.float32])


@pytest.mark.parametrize("device", DEVICES)
def test_shared_weight_single_rows(device):
    # M == 1 per batch entry with b shared: the entries' rows fold into one product of 40 rows
    ta, va = rand((40, 1, 7), bm.float32, seed=25, device=device)
    tb, vb = rand((7, 5), bm.float32, seed=26, device=device)
    assert_close(ta @ tb, va @ vb, *TOL[bm.float32])
    assert_close(ta[::3] @ tb, va[::3] @ vb, *TOL[bm.float32])


@pytest.mark.parametrize("dtype", [bm.float32, bm.float64])
@pytest.mark.parametrize("m,n", [(1, 7), (7, 1), (1, 1)])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matrix_vector_products_every_orientation(dtype, m, n, ta, tb):
    """One row or one column goes to gemv on CPU: every transpose and leading-dimension case."""
    rng = np.random.default_rng(m * 100 + n * 10 + 2 * ta + tb)
    k = 9
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    # transposed operands are views of padded buffers, so their leading dimension is not the width
    if ta:
        ta_ = bm.tensor(np.pad(a.T, ((0, 0), (0, 3)))).to(dtype)[:, :m].T
    else:
        ta_ = bm.tensor(np.pad(a, ((0, 0), (0, 2)))).to(dtype)[:, :k]
    if tb:
        tb_ = bm.tensor(np.pad(b.T, ((0, 0), (0, 2)))).to(dtype)[:, :k].T
    else:
        tb_ = bm.tensor(np.pad(b, ((0, 0), (0, 4)))).to(dtype)[:, :n]
    got = (ta_ @ tb_).numpy()
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)


_NT_CHILD = r"""
import hashlib, sys
import numpy as np
import bessemer as bm
rng = np.random.default_rng(21)
h = hashlib.sha256()
for m, n, k in [(2, 5, 1), (3, 7, 15), (16, 33, 16), (5, 100, 17), (8, 1000, 512), (13, 64, 1000)]:
    x, w = rng.standard_normal((m, k), dtype=np.float32), rng.standard_normal((n, k), dtype=np.float32)
    h.update((bm.tensor(x) @ bm.tensor(w).T).numpy().tobytes())
print(bm._core.build_info()["cpu_isa"], h.hexdigest())
"""


def test_few_rows_kernel_same_bits_on_every_wide_copy_and_thread_count():
    """gemm_nt.cpp's AVX2 and AVX-512 copies add the same products in the same lanes and tree, and
    each output is one thread's: the same bits for either copy and 1 or 2 threads."""
    best = bm._core.build_info()["cpu_isa"]
    isas = {"avx512": ["avx2", "avx512"], "avx2": ["avx2"]}.get(best, [])
    assert isas or best == "base"  # the baseline copy hands these products to BLAS: nothing to compare
    got = set()
    for isa in isas:
        for threads in ("1", "2"):
            env = dict(os.environ, BESSEMER_CPU_ISA=isa, BESSEMER_NUM_THREADS=threads)
            out = subprocess.run([sys.executable, "-c", _NT_CHILD], env=env, capture_output=True, text=True,
                                 check=True).stdout.split()
            assert out[0] == isa
            got.add(out[1])
    assert len(got) <= 1
