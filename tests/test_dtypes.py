"""The 8- and 16-bit integer dtypes (int8, uint8, int16), conversions and the default dtype, checked
against torch (the oracle) on every device: promotion, wrapping arithmetic, NumPy and safetensors
round trips, item/printing, and the conversion methods."""

from __future__ import annotations

import numpy as np
import pytest
import safetensors.numpy as safetensors_numpy
import torch

import bessemer as bm
from harness import DEVICES

SMALL = [bm.int8, bm.uint8, bm.int16]
TORCH = {bm.bool: torch.bool, bm.int8: torch.int8, bm.uint8: torch.uint8, bm.int16: torch.int16,
         bm.int32: torch.int32, bm.int64: torch.int64, bm.float16: torch.float16, bm.bfloat16: torch.bfloat16,
         bm.float32: torch.float32, bm.float64: torch.float64}
FROM_TORCH = {v: k for k, v in TORCH.items()}
NP = {bm.int8: np.int8, bm.uint8: np.uint8, bm.int16: np.int16}


def both(values, dtype, device):
    t = torch.tensor(values, dtype=TORCH[dtype])
    return bm.tensor(t.numpy(), device=device), t


def same(ours, theirs):
    assert ours.dtype == FROM_TORCH[theirs.dtype], f"dtype {ours.dtype}, torch gives {theirs.dtype}"
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.fixture
def default_dtype():
    """Restores the default dtype whatever the test does."""
    yield
    bm.set_default_dtype(bm.float32)


# ---- the dtypes exist and promote as torch ----

def test_promote_types_match_torch_for_every_pair():
    dts = list(TORCH)
    for a in dts:
        for b in dts:
            x = bm.zeros(2, dtype=a)
            y = bm.zeros(2, dtype=b)
            want = torch.promote_types(TORCH[a], TORCH[b])
            assert (x + y).dtype == FROM_TORCH[want], (a, b)


@pytest.mark.parametrize("device", DEVICES)
def test_weak_scalars_keep_the_small_integer_dtype(device):
    for dt in SMALL:
        x, tx = both([1, 2, 3], dt, device)
        same(x + 1, tx + 1)
        same(2 * x, 2 * tx)
        same(x + True, tx + True)
        same(x * 1.5, tx * 1.5)  # int tensor with a float number: the default float dtype
        same(x > 1, tx > 1)
    u, tu = both([200, 3], bm.uint8, device)
    i, ti = both([-100, 3], bm.int8, device)
    same(u + i, tu + ti)  # uint8 + int8 -> int16, no wrap at 8 bits


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", SMALL, ids=lambda d: d.name)
def test_integer_arithmetic_wraps_like_torch(device, dt):
    info = np.iinfo(NP[dt])
    x, tx = both([info.max, info.min, info.max - 1, 5, 0], dt, device)
    y, ty = both([1, 1, 3, 7, info.max], dt, device)
    same(x + y, tx + ty)
    same(x - y, tx - ty)
    same(x * y, tx * ty)
    same(-x, -tx)
    same(x.abs(), tx.abs())
    same(x ** 3, tx ** 3)
    same(bm.maximum(x, y), torch.maximum(tx, ty))
    same(x // 2, tx // 2)
    same(x % 3, tx % 3)
    same(x[::2] * y[::2], tx[::2] * ty[::2])  # strided


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dt", SMALL, ids=lambda d: d.name)
def test_division_sum_and_reductions_of_small_ints(device, dt):
    x, tx = both([[1, 2, 100], [7, 0, 120]], dt, device)
    y, ty = both([[3, 4, 7], [2, 9, 5]], dt, device)
    q = x / y
    assert q.dtype == bm.float32
    np.testing.assert_allclose(q.numpy(), (tx / ty).numpy(), rtol=1e-6)
    same(x.sum(), tx.sum())  # int64, no wrap at the element width
    same(x.sum(dim=1), tx.sum(dim=1))
    same(x.amax(dim=0), tx.amax(dim=0))
    same(x.argmax(dim=1), tx.argmax(dim=1))
    same(x @ y.T, tx @ ty.T)  # integer matmul wraps at the element width, as torch's
    with pytest.raises(bm.UnsupportedError, match=r"\[mean\]"):
        x.mean()


@pytest.mark.parametrize("device", DEVICES)
def test_integer_division_by_zero_raises_for_small_ints(device):
    for dt in SMALL:
        x = bm.tensor([1, 2], dtype=dt, device=device)
        with pytest.raises(ZeroDivisionError, match=r"\[floor_divide\]"):
            x // bm.tensor([1, 0], dtype=dt, device=device)
        with pytest.raises(ValueError, match=r"\[pow\]"):
            x ** bm.tensor([1, -1], dtype=bm.int8, device=device) if dt != bm.uint8 else x ** -1


# ---- NumPy, safetensors, item, printing ----

@pytest.mark.parametrize("device", DEVICES)
def test_numpy_round_trip_keeps_small_integer_dtypes(device):
    img = np.arange(24, dtype=np.uint8).reshape(2, 3, 4) * 10  # a uint8 image stays uint8
    for arr in (img, img.astype(np.int8), img.astype(np.int16) - 100):
        t = bm.tensor(arr, device=device)
        assert t.dtype == bm.dtype_from_name(arr.dtype.name)
        out = t.numpy()
        assert out.dtype == arr.dtype
        np.testing.assert_array_equal(out, arr)
        np.testing.assert_array_equal(np.asarray(t[1, ::2]), arr[1, ::2])
    shared = bm.from_numpy(img)
    assert shared.dtype == bm.uint8
    img[0, 0, 0] = 77  # zero-copy
    assert shared[0, 0, 0].item() == 77


@pytest.mark.parametrize("device", DEVICES)
def test_item_tolist_and_repr(device):
    for dt in SMALL:
        t = bm.tensor([-3 if dt != bm.uint8 else 250, 4], dtype=dt, device=device)
        tt = torch.tensor(t.tolist(), dtype=TORCH[dt])
        assert t[0].item() == tt[0].item() and isinstance(t[0].item(), int)
        assert t.tolist() == tt.tolist()
        assert f"dtype=bessemer.{dt.name}" in repr(t)
        assert int(t[1]) == 4


def test_safetensors_small_integers_round_trip_with_the_reference_library(tmp_path):
    arrays = {"u8": np.arange(6, dtype=np.uint8) * 40, "i8": np.arange(-3, 3, dtype=np.int8),
              "i16": np.arange(-300, 300, 100, dtype=np.int16)}
    path = tmp_path / "small.safetensors"
    bm.save_file({k: bm.tensor(v) for k, v in arrays.items()}, path)
    theirs = safetensors_numpy.load_file(str(path))
    for k, v in arrays.items():
        assert theirs[k].dtype == v.dtype
        np.testing.assert_array_equal(theirs[k], v)
    path2 = tmp_path / "theirs.safetensors"
    safetensors_numpy.save_file(arrays, str(path2))
    for d in DEVICES:
        ours = bm.load_file(path2, device=d)
        for k, v in arrays.items():
            assert ours[k].dtype == bm.dtype_from_name(v.dtype.name)
            np.testing.assert_array_equal(ours[k].numpy(), v)


# ---- conversion methods ----

@pytest.mark.parametrize("device", DEVICES)
def test_conversion_methods_match_torch(device):
    vals = [0.0, 1.5, 2.75, 100.25, 3.0]
    x, tx = both(vals, bm.float32, device)
    for name in ("byte", "char", "short", "int", "long", "half", "bfloat16", "float", "bool"):
        ours, theirs = getattr(x, name)(), getattr(tx, name)()
        assert ours.dtype == FROM_TORCH[theirs.dtype], name
        np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())
    assert x.float() is x  # torch returns the tensor itself when the dtype already matches
    assert x.type(bm.int16).dtype == bm.int16
    assert x.type("bessemer.ShortTensor").dtype == bm.int16
    assert x.type("torch.ByteTensor").dtype == bm.uint8
    suffix = {"cpu": ""}.get(device, device.split(":")[0].replace("-", "_") + ".")
    assert x.type() == f"bessemer.{suffix}FloatTensor"
    assert x.byte().type().endswith("ByteTensor")
    with pytest.raises(TypeError, match=r"\[type\]"):
        x.type("bessemer.NoSuchTensor")
    if device == "cpu":
        assert x.double().dtype == bm.float64
    i, ti = both([-1, 300, -129, 70000], bm.int32, device)
    for name in ("byte", "char", "short"):
        same(getattr(i, name)(), getattr(ti, name)())  # integer narrowing wraps, as in torch


# ---- the default dtype ----

def test_default_dtype_follows_torch(default_dtype):
    assert bm.get_default_dtype() == bm.float32
    bm.set_default_dtype(bm.float64)
    assert bm.get_default_dtype() == bm.float64
    torch_default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        cases = [
            (bm.tensor([1.5, 2.0]), torch.tensor([1.5, 2.0])),
            (bm.zeros(2), torch.zeros(2)),
            (bm.ones(2, 3), torch.ones(2, 3)),
            (bm.full((2,), 1.5), torch.full((2,), 1.5)),
            (bm.tensor([1, 2]) / bm.tensor([2, 2]), torch.tensor([1, 2]) / torch.tensor([2, 2])),
            (bm.tensor([1, 2]) * 0.5, torch.tensor([1, 2]) * 0.5),
            (bm.tensor([1, 4]).sqrt(), torch.tensor([1, 4]).sqrt()),
            (bm.tensor([1.0], dtype=bm.float32) + 1.5, torch.tensor([1.0], dtype=torch.float32) + 1.5),
            (bm.eye(2), torch.eye(2)),
            (bm.linspace(0, 1, 3), torch.linspace(0, 1, 3)),
        ]
        for ours, theirs in cases:
            assert ours.dtype == FROM_TORCH[theirs.dtype]
            np.testing.assert_allclose(ours.numpy(), theirs.numpy())
        assert "dtype" not in repr(bm.tensor([1.5]))  # the default dtype is not printed, as in torch
        assert "dtype=bessemer.float32" in repr(bm.tensor([1.5], dtype=bm.float32))
    finally:
        torch.set_default_dtype(torch_default)
    bm.set_default_dtype(bm.float16)
    assert bm.tensor([0.1]).dtype == bm.float16
    bm.set_default_dtype(bm.bfloat16)
    assert bm.zeros(1).dtype == bm.bfloat16 and bm.tensor([0.5]).dtype == bm.bfloat16


def test_set_default_dtype_refuses_non_floating_dtypes(default_dtype):
    for bad in (bm.int32, bm.uint8, bm.bool):
        with pytest.raises(TypeError, match=r"\[set_default_dtype\]"):
            bm.set_default_dtype(bad)
    with pytest.raises(TypeError, match=r"\[set_default_dtype\]"):
        bm.set_default_dtype("float64")
    assert bm.get_default_dtype() == bm.float32  # unchanged by the refused calls
