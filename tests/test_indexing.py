"""Indexing against torch CPU (the oracle) on every device: t[idx] with basic and advanced indices on
every layout of the indexed tensor and of the index tensors (int32/int64, bool masks of 1..ndim
dims, several advanced indices adjacent or separated), t[idx] = value, and the errors. index_select,
index_add, index_copy_ and nonzero are in test_index_ops.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import bessemer as bm
from harness import DEVICES, make_input

X_LAYOUTS = ["contiguous", "transposed", "sliced", "offset", "broadcast"]
IDX_LAYOUTS = ["contiguous", "transposed", "sliced", "offset", "broadcast", "0d"]
IDX_DTYPES = [bm.int32, bm.int64]
SHAPE = (3, 4, 5)
TORCH = {bm.float32: torch.float32, bm.float16: torch.float16, bm.bfloat16: torch.bfloat16, bm.float64: torch.float64,
         bm.int32: torch.int32, bm.int64: torch.int64, bm.bool: torch.bool}


def make_x(layout, device, dtype=bm.float32, shape=SHAPE, seed=0):
    """(bessemer tensor in `layout`, the same values as a torch tensor)."""
    t, vals = make_input(shape, dtype, device, layout, np.random.default_rng(seed))
    return t, torch.tensor(np.array(vals)).to(TORCH[dtype])


def make_index(values, layout, device, dtype):
    """(bessemer index tensor in `layout`, its values as a torch tensor). "broadcast" repeats the
    first entry along the last dim with a zero stride; "0d" keeps only the first value."""
    v = np.asarray(values)
    np_dtype = {bm.int32: np.int32, bm.int64: np.int64, bm.bool: np.bool_}[dtype]
    v = v.astype(np_dtype)
    if layout == "0d":
        v = v.reshape(-1)[0]
        return bm.tensor(v, dtype=dtype, device=device), torch.tensor(v)
    if layout == "contiguous":
        t = bm.tensor(v, dtype=dtype, device=device)
    elif layout == "transposed":
        if v.ndim == 1:  # a column of a transposed matrix
            t = bm.tensor(np.stack([v, v, v]), dtype=dtype, device=device).T[:, 1]
        else:
            t = bm.tensor(np.ascontiguousarray(np.swapaxes(v, -1, -2)), dtype=dtype, device=device).transpose(-1, -2)
    elif layout == "sliced":
        big = np.zeros(tuple(2 * s + 1 for s in v.shape), np_dtype)
        sl = tuple(slice(1, None, 2) for _ in v.shape)
        big[sl] = v
        t = bm.tensor(big, dtype=dtype, device=device)[sl]
    elif layout == "offset":
        flat = np.concatenate([np.zeros(3, np_dtype), v.ravel()])
        t = bm.tensor(flat, dtype=dtype, device=device)[3:].reshape(*v.shape)
    elif layout == "broadcast":
        v = np.ascontiguousarray(np.broadcast_to(v[..., :1], v.shape))
        t = bm.tensor(v[..., :1], dtype=dtype, device=device).expand(*v.shape)
    else:
        raise ValueError(layout)
    assert t.shape == v.shape
    return t, torch.tensor(v)


def check(got, want, view_of=None):
    assert isinstance(got, bm.Tensor)
    assert tuple(got.shape) == tuple(want.shape), f"shape {tuple(got.shape)} != {tuple(want.shape)}"
    g = got.to(bm.float32).numpy() if got.dtype == bm.bfloat16 else got.numpy()
    np.testing.assert_array_equal(g, (want.float() if want.dtype == torch.bfloat16 else want).numpy())
    if view_of is not None:
        assert got._storage_id() == view_of._storage_id()


# ---------------------------------------------------------------- basic indices: views

BASIC = [
    (1,), (-1,), (slice(None),), (slice(1, None, 2),), (Ellipsis, 1), (None, 0, slice(None, None, 3)),
    (1, Ellipsis, None), (slice(-3, None), -2), (), (Ellipsis,), (slice(5, 1),), (0, 1, 2), (-3, slice(2, -1), None),
    (slice(None, None, 2), Ellipsis, slice(1, 4, 2)), (None, None), 2,
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", X_LAYOUTS)
def test_basic_indices_are_views(device, layout):
    t, ref = make_x(layout, device)
    for idx in BASIC:
        check(t[idx], ref[idx], view_of=t)


@pytest.mark.parametrize("device", DEVICES)
def test_basic_indices_of_0d(device):
    t = bm.tensor(3.5, device=device)
    ref = torch.tensor(3.5)
    for idx in [(), Ellipsis, None, (None, None), (Ellipsis, None)]:
        check(t[idx], ref[idx], view_of=t)


# ---------------------------------------------------------------- integer index tensors

INT_EXPRS = [
    lambda i: i,
    lambda i: (slice(None), i),
    lambda i: (Ellipsis, i),
    lambda i: (i, slice(1, None)),
    lambda i: (None, slice(None), i),
    lambda i: (slice(None, None, 2), i, None),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("x_layout", X_LAYOUTS)
@pytest.mark.parametrize("i_layout", IDX_LAYOUTS)
@pytest.mark.parametrize("idtype", IDX_DTYPES)
def test_int_tensor_index(device, x_layout, i_layout, idtype):
    t, ref = make_x(x_layout, device)
    i, ri = make_index([[2, -1, 0], [-3, 1, 1]], i_layout, device, idtype)
    for expr in INT_EXPRS:
        check(t[expr(i)], ref[expr(ri)])


# ---------------------------------------------------------------- bool masks of 1..ndim dims

MASK_EXPRS = [  # (mask shape, index expression)
    ((3,), lambda m: m),
    ((3, 4), lambda m: m),
    ((3, 4, 5), lambda m: m),
    ((4,), lambda m: (slice(None), m)),
    ((4, 5), lambda m: (slice(None), m)),
    ((5,), lambda m: (Ellipsis, m)),
    ((3, 4), lambda m: (None, m)),
    ((3,), lambda m: (m, slice(None), slice(1, 3))),
    ((4, 5), lambda m: (slice(None, None, 2), m, None)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("x_layout", X_LAYOUTS)
@pytest.mark.parametrize("m_layout", IDX_LAYOUTS)
def test_bool_mask_index(device, x_layout, m_layout):
    t, ref = make_x(x_layout, device)
    rng = np.random.default_rng(1)
    for shape, expr in MASK_EXPRS:
        m, rm = make_index(rng.random(shape) < 0.5, m_layout, device, bm.bool)
        check(t[expr(m)], ref[expr(rm)])


@pytest.mark.parametrize("device", DEVICES)
def test_mask_from_comparison_and_nan(device):
    v = np.array([[1.0, np.nan, -2.0], [0.0, 5.0, np.inf]], np.float32)
    t, ref = bm.tensor(v, device=device), torch.tensor(v)
    check(t[t > 0], ref[ref > 0])
    check(t[t != t], ref[ref != ref])
    check(t[(t > 0).any(1)], ref[(ref > 0).any(1)])


# ---------------------------------------------------------------- several advanced indices

MULTI_EXPRS = [  # adjacent ones keep their place, separated ones go first
    lambda i, j: (i, j),
    lambda i, j: (slice(None), i, j),
    lambda i, j: (i, slice(None), j),
    lambda i, j: (i, None, j),
    lambda i, j: (i, slice(1, 3), j),
    lambda i, j: (None, i, j),
    lambda i, j: (Ellipsis, i, j),
    lambda i, j: (i, j, slice(None, None, 2)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("x_layout", X_LAYOUTS)
@pytest.mark.parametrize("i_layout", IDX_LAYOUTS)
@pytest.mark.parametrize("idtype", IDX_DTYPES)
def test_several_advanced_indices(device, x_layout, i_layout, idtype):
    t, ref = make_x(x_layout, device)
    i, ri = make_index([[0], [-1]], i_layout if i_layout != "broadcast" else "contiguous", device, idtype)  # (2, 1)
    j, rj = make_index([2, -3, 1], i_layout, device, bm.int64)  # (3,): broadcasts with i to (2, 3)
    for expr in MULTI_EXPRS:
        check(t[expr(i, j)], ref[expr(ri, rj)])


@pytest.mark.parametrize("device", DEVICES)
def test_mask_with_int_index_and_three_indices(device):
    t, ref = make_x("sliced", device)
    m = np.array([True, False, True])
    k = np.array([4, 0])
    check(t[bm.tensor(m, device=device), :, bm.tensor(k, device=device)], ref[torch.tensor(m), :, torch.tensor(k)])
    a, b, c = np.array([0, 2]), np.array([[1], [3]]), np.array([4, -1])
    check(t[bm.tensor(a, device=device), bm.tensor(b, device=device), bm.tensor(c, device=device)],
          ref[torch.tensor(a), torch.tensor(b), torch.tensor(c)])
    m2 = np.zeros((4, 5), bool)
    m2[1, 3] = m2[3, 0] = True  # two True entries: broadcast with a 2-element index
    check(t[bm.tensor([2, 0], device=device), bm.tensor(m2, device=device)],
          ref[torch.tensor([2, 0]), torch.tensor(m2)])


@pytest.mark.parametrize("device", DEVICES)
def test_ints_mixed_with_advanced_follow_torch(device):
    # torch applies ints first (as select): x[1, :, i] keeps the slice's dim first, unlike NumPy.
    t, ref = make_x("transposed", device)
    i, ri = bm.tensor([0, 2, -1], device=device), torch.tensor([0, 2, -1])
    for expr in [lambda i: (1, slice(None), i), lambda i: (i, 1), lambda i: (1, i, 2), lambda i: (slice(None), 2, i),
                 lambda i: (-1, None, i)]:
        check(t[expr(i)], ref[expr(ri)])


# ---------------------------------------------------------------- empty results, bools, lists, arrays

@pytest.mark.parametrize("device", DEVICES)
def test_empty_results(device):
    t, ref = make_x("offset", device)
    e = bm.tensor([], dtype=bm.int64, device=device)
    re = torch.tensor([], dtype=torch.int64)
    check(t[e], ref[re])
    check(t[:, e], ref[:, re])
    check(t[e, e], ref[re, re])
    check(t[1:1, e], ref[1:1, re])
    check(t[t > 100], ref[ref > 100])
    check(t[[]], ref[[]])
    z = bm.zeros(0, 3, device=device)
    check(z[e], torch.zeros(0, 3)[re])
    check(z[:, bm.tensor([2, 0], device=device)], torch.zeros(0, 3)[:, torch.tensor([2, 0])])
    check(z[z > 0], torch.zeros(0, 3)[torch.zeros(0, 3) > 0])


@pytest.mark.parametrize("device", DEVICES)
def test_python_bools_0d_tensors_lists_and_arrays(device):
    t, ref = make_x("contiguous", device)
    for idx, ridx in [
        (True, True), (False, False), ((None, True), (None, True)), ((1, False), (1, False)),
        (bm.tensor(True, device=device), torch.tensor(True)), (bm.tensor(False, device=device), torch.tensor(False)),
        (bm.tensor(2, device=device), torch.tensor(2)),
        (bm.tensor(-1, dtype=bm.int32, device=device), torch.tensor(-1)),
        ([0, 2], [0, 2]), ([True, False, True], [True, False, True]),
        ([[0, 1], [2, 2]], torch.tensor([[0, 1], [2, 2]])),
        (np.array([2, 0]), torch.tensor([2, 0])), (np.int64(1), 1), (np.array(1), torch.tensor(1)),
        ((slice(None), np.array([True, False, True, True])), (slice(None), torch.tensor([True, False, True, True]))),
        ([0, slice(None), 2], (0, slice(None), 2)),
        (np.array([1, 0, 1], dtype=np.uint8), torch.tensor([True, False, True])),
        (np.bool_(True), True),
    ]:
        check(t[idx], ref[ridx])
    # a 0-d int tensor index is a view, as an int is
    assert t[bm.tensor(1, device=device)]._storage_id() == t._storage_id()


# ---------------------------------------------------------------- setitem

SET_LAYOUTS = ["contiguous", "transposed", "sliced", "offset"]


def _set_both(t, ref, idx, ridx, value, rvalue):
    t[idx] = value
    ref[ridx] = rvalue
    check(t, ref)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", SET_LAYOUTS)
def test_setitem_basic(device, layout):
    t, ref = make_x(layout, device)
    _set_both(t, ref, 1, 1, 5.0, 5.0)
    _set_both(t, ref, (slice(None), slice(1, 3)), (slice(None), slice(1, 3)),
              bm.tensor([1.0, 2, 3, 4, 5], device=device), torch.tensor([1.0, 2, 3, 4, 5]))
    _set_both(t, ref, (0, Ellipsis), (0, Ellipsis), bm.ones(1, 1, 5, device=device), torch.ones(1, 1, 5))
    _set_both(t, ref, (Ellipsis, -1), (Ellipsis, -1), bm.tensor([[7], [8], [9]], dtype=bm.int64, device=device),
              torch.tensor([[7], [8], [9]]))
    _set_both(t, ref, (None, 2, slice(None, None, 2)), (None, 2, slice(None, None, 2)), -1, -1)
    _set_both(t, ref, Ellipsis, Ellipsis, bm.tensor(0.5, device=device), torch.tensor(0.5))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", SET_LAYOUTS)
@pytest.mark.parametrize("idtype", IDX_DTYPES)
def test_setitem_advanced(device, layout, idtype):
    t, ref = make_x(layout, device)
    rng = np.random.default_rng(2)
    i = np.array([2, -3])
    j = np.array([[0], [2]])
    bi, bj = bm.tensor(i, dtype=idtype, device=device), bm.tensor(j, dtype=idtype, device=device)
    ti, tj = torch.tensor(i), torch.tensor(j)
    _set_both(t, ref, bi, ti, 1.5, 1.5)
    _set_both(t, ref, (slice(None), bi), (slice(None), ti), bm.tensor(np.arange(5.0, dtype=np.float32), device=device),
              torch.tensor(np.arange(5.0, dtype=np.float32)))
    v = rng.standard_normal((2, 2, 5)).astype(np.float32)
    _set_both(t, ref, (bi, bj), (ti, tj), bm.tensor(v, device=device), torch.tensor(v))  # adjacent, merged
    v = rng.standard_normal((2, 2, 4)).astype(np.float32)
    _set_both(t, ref, (bj, slice(None), bi), (tj, slice(None), ti), bm.tensor(v, device=device), torch.tensor(v))
    m = rng.random((3, 4)) < 0.5
    _set_both(t, ref, bm.tensor(m, device=device), torch.tensor(m), -2.0, -2.0)
    vm = rng.standard_normal((int(m.sum()), 5)).astype(np.float32)
    _set_both(t, ref, bm.tensor(m, device=device), torch.tensor(m), bm.tensor(vm, device=device), torch.tensor(vm))
    m3 = rng.random(SHAPE) < 0.3
    _set_both(t, ref, bm.tensor(m3, device=device), torch.tensor(m3), bm.tensor(3, device=device), torch.tensor(3))
    _set_both(t, ref, t > 1, ref > 1, 0.0, 0.0)
    m4, m5 = rng.random(4) < 0.5, rng.random((4, 5)) < 0.5
    _set_both(t, ref, (slice(None), bm.tensor(m4, device=device)), (slice(None), torch.tensor(m4)), 3, 3)
    _set_both(t, ref, (None, Ellipsis, bm.tensor(m5, device=device)), (None, Ellipsis, torch.tensor(m5)), -1.5, -1.5)
    _set_both(t, ref, (slice(1, None), bm.tensor(m5, device=device)), (slice(1, None), torch.tensor(m5)),
              bm.tensor(4.0, device=device), torch.tensor(4.0))
    _set_both(t, ref, (bm.tensor([], dtype=idtype, device=device),), (torch.tensor([], dtype=torch.int64),), 9.0, 9.0)


@pytest.mark.parametrize("device", DEVICES)
def test_setitem_writes_through_views_only_where_indexed(device):
    base = bm.zeros(4, 6, device=device)
    rbase = torch.zeros(4, 6)
    v, rv = base[1:, ::2], rbase[1:, ::2]  # (3, 3) strided view
    _set_both(v, rv, (bm.tensor([0, 2], device=device), bm.tensor([2, 1], device=device)),
              (torch.tensor([0, 2]), torch.tensor([2, 1])), bm.tensor([1.0, 2.0], device=device),
              torch.tensor([1.0, 2.0]))
    check(base, rbase)
    # advanced dims that cannot merge in place (a transposed view): written through a copy
    b3 = bm.tensor(np.arange(60.0, dtype=np.float32).reshape(5, 4, 3), device=device)
    r3 = torch.tensor(np.arange(60.0, dtype=np.float32).reshape(5, 4, 3))
    t, r = b3.permute(2, 1, 0), r3.permute(2, 1, 0)  # (3, 4, 5)
    _set_both(t, r, (bm.tensor([0, 2], device=device), bm.tensor([1, 3], device=device)),
              (torch.tensor([0, 2]), torch.tensor([1, 3])), bm.tensor([[-1.0], [-2.0]], device=device),
              torch.tensor([[-1.0], [-2.0]]))
    check(b3, r3)


@pytest.mark.parametrize("device", DEVICES)
def test_setitem_dtypes_and_values(device):
    t = bm.zeros(3, dtype=bm.int64, device=device)
    t[0] = 1.7
    t[1:] = bm.tensor([2.9, -2.9], device=device)
    assert t.tolist() == [1, 2, -2]  # torch truncates toward zero
    f = bm.zeros(2, 3, dtype=bm.float16, device=device)
    f[bm.tensor([1], device=device)] = bm.tensor([[1, 2, 3]], dtype=bm.int32, device=device)
    f[0] = np.array([0.5, 1.5, 2.5])
    f[0, [0, 2]] = [7, 8]
    assert f.to(bm.float32).tolist() == [[7.0, 1.5, 8.0], [1.0, 2.0, 3.0]]
    b = bm.zeros(4, dtype=bm.bool, device=device)
    b[bm.tensor([1, 3], device=device)] = True
    assert b.tolist() == [False, True, False, True]
    h = bm.zeros(2, 2, dtype=bm.bfloat16, device=device)
    h[:, 1] = [1.5, -2.0]
    assert h.to(bm.float32).tolist() == [[0.0, 1.5], [0.0, -2.0]]


@pytest.mark.parametrize("device", DEVICES)
def test_setitem_duplicates_last_write_wins(device):
    t = bm.zeros(5, 2, device=device)
    t[bm.tensor([0, 3, 0, 0], device=device)] = bm.tensor([[1.0], [2.0], [3.0], [4.0]], device=device)
    assert t[:, 0].tolist() == [4.0, 0.0, 0.0, 2.0, 0.0]
    t[bm.tensor([1, -4], device=device), bm.tensor([1, 1], device=device)] = bm.tensor([5.0, 6.0], device=device)
    assert t[1, 1].item() == 6.0


@pytest.mark.parametrize("device", DEVICES)
def test_setitem_overlapping_value(device):
    t = bm.arange(6, device=device)
    r = torch.arange(6)
    t[1:] = t[:-1]
    r[1:] = r[:-1].clone()
    check(t, r)
    t[bm.tensor([0, 1], device=device)] = t[4:]
    assert t.tolist() == [3, 4, 1, 2, 3, 4]


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("device", DEVICES)
def test_index_errors(device):
    t = bm.zeros(3, 4, device=device)
    cases = [
        (5, IndexError, r"\[index\] index 5 is out of bounds for dimension 0 with size 3"),
        ((0, -5), IndexError, r"\[index\] index -5 is out of bounds for dimension 1 with size 4"),
        (bm.tensor([0, 7], device=device), IndexError, r"\[index\] index 7 is out of bounds for dimension 0"),
        ((slice(None), bm.tensor([-5], dtype=bm.int32, device=device)), IndexError,
         r"\[index\] index -5 is out of bounds for dimension 1 with size 4"),
        (bm.tensor(3, device=device), IndexError, r"\[index\] index 3 is out of bounds"),
        (bm.tensor([0.5], device=device), IndexError, r"\[index\] tensors used as indices must be .* got float32"),
        ([0.5], IndexError, r"\[index\] tensors used as indices must be"),
        (1.5, TypeError, r"\[index\] only integers, slices"),
        ("a", TypeError, r"\[index\] only integers, slices"),
        (bm.tensor([True, False], device=device), IndexError, r"\[index\] the shape of the mask \(2,\) at index 0 does "
                                                               r"not match the shape of the indexed tensor \(3, 4\)"),
        ((slice(None), bm.ones(3, dtype=bm.bool, device=device)), IndexError, r"\[index\] the shape of the mask"),
        ((0, 0, 0), IndexError, r"\[index\] too many indices for a tensor of dimension 2 \(got 3\)"),
        (bm.ones(3, 4, 1, dtype=bm.bool, device=device), IndexError, r"\[index\] too many indices"),
        ((Ellipsis, Ellipsis), IndexError, r"\[index\] an index can only have a single ellipsis"),
        ((bm.tensor([0, 1], device=device), bm.tensor([0, 1, 2], device=device)), IndexError,
         r"\[index\] shape mismatch: indexing tensors could not be broadcast together with shapes \(2,\), \(3,\)"),
        (slice(None, None, 0), ValueError, r"\[index\] slice step cannot be zero"),
    ]
    for idx, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            t[idx]
    with pytest.raises(IndexError, match=r"\[index\] too many indices for a tensor of dimension 0"):
        bm.tensor(1.0, device=device)[0]


@pytest.mark.parametrize("device", DEVICES)
def test_setitem_errors_leave_the_tensor_unchanged(device):
    t = bm.arange(12, dtype=bm.float32, device=device).reshape(3, 4)
    before = t.numpy().copy()
    cases = [
        (bm.tensor([0, 9], device=device), 1.0, IndexError, r"\[index_put\] index 9 is out of bounds"),
        ((bm.tensor([0, 1], device=device), 5), 1.0, IndexError, r"\[index_put\] index 5 is out of bounds"),
        (bm.tensor([0, 1], device=device), bm.ones(3, 4, device=device), ValueError,
         r"\[index_put\] shape mismatch: value tensor of shape \(3, 4\) cannot be broadcast to indexing result of "
         r"shape \(2, 4\)"),
        (0, bm.ones(2, 4, device=device), ValueError, r"\[index_put\] shape mismatch"),
        (bm.tensor([1.0], device=device), 1.0, IndexError, r"\[index_put\] tensors used as indices must be"),
        (bm.ones(4, dtype=bm.bool, device=device), 1.0, IndexError, r"\[index_put\] the shape of the mask"),
        ((0, 0, 0), 1.0, IndexError, r"\[index_put\] too many indices"),
        (0, "x", TypeError, r"\[index_put\] expected a Tensor, a number or an array-like value"),
    ]
    for idx, value, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            t[idx] = value
    np.testing.assert_array_equal(t.numpy(), before)


def test_index_device_mismatch():
    others = [d for d in DEVICES if d != "cpu"]
    assert others
    t = bm.zeros(3, device=others[0])
    with pytest.raises(bm.DeviceMismatchError, match=r"\[index\] inputs are on different devices: self on "):
        t[bm.tensor([0, 1])]
    with pytest.raises(bm.DeviceMismatchError, match=r"\[index_put\] inputs are on different devices"):
        t[bm.tensor([0, 1])] = 1.0
    with pytest.raises(bm.DeviceMismatchError, match=r"\[index_put\] inputs are on different devices"):
        t[0] = bm.tensor(1.0)
    # lists and arrays are made on the indexed tensor's device
    assert t[[0, 2]].device == bm.device(others[0])
