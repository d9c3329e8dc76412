"""Tensors mixed with NumPy arrays and NumPy scalars in Python's operators, both ways: the result is
a bessemer tensor with torch's type promotion, the array standing for torch.as_tensor(array) and a
NumPy scalar for the Python number it holds (torch's own treatment of NumPy scalars). The oracle is
torch CPU computing the same expression."""

from __future__ import annotations

import operator

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer.testing import assert_close
from harness import DEVICES

OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
       "%": operator.mod, "**": operator.pow, "==": operator.eq, "!=": operator.ne, "<": operator.lt,
       "<=": operator.le, ">": operator.gt, ">=": operator.ge}
# & | ^ join the list once Tensor has them (the bitwise ops are another part of issue 12).
# (looked up in the class's own dicts: every class answers hasattr(cls, "__or__") through type's |)
BITWISE = {k: f for k, f, dunder in (("&", operator.and_, "__and__"), ("|", operator.or_, "__or__"),
                                     ("^", operator.xor, "__xor__"))
           if any(dunder in vars(c) for c in bm.Tensor.__mro__)}
TENSOR_DTYPES = {"float32": (bm.float32, torch.float32), "float16": (bm.float16, torch.float16),
                 "int32": (bm.int32, torch.int32), "int64": (bm.int64, torch.int64)}
ARRAY_DTYPES = [np.float64, np.float32, np.int64, np.int32]
BM_OF = {torch.float32: bm.float32, torch.float16: bm.float16, torch.float64: bm.float64, torch.int32: bm.int32,
         torch.int64: bm.int64, torch.bool: bm.bool, torch.bfloat16: bm.bfloat16}
rng = np.random.default_rng(11)


def _pair(tdtype: str, device: str, shape=(2, 3)):
    """A bessemer tensor and the torch tensor of the same values (1..4: every op is defined)."""
    bdt, tdt = TENSOR_DTYPES[tdtype]
    vals = rng.integers(1, 5, shape).astype(np.float64)
    return bm.tensor(vals, dtype=bdt, device=device), torch.tensor(vals, dtype=tdt)


def _check(ours, expected: torch.Tensor):
    assert isinstance(ours, bm.Tensor), f"got a {type(ours).__name__}, not a bessemer tensor"
    assert ours.dtype == BM_OF[expected.dtype], (ours.dtype, expected.dtype)
    assert tuple(ours.shape) == tuple(expected.shape)
    assert_close(ours.to("cpu").to(bm.float64).numpy(), expected.double().numpy(), rtol=2e-3, atol=1e-6)


def _devices_for(array_dtype):
    # float64 operands exist on cpu only (as every float64 tensor)
    return [d for d in DEVICES if d == "cpu" or array_dtype != np.float64]


def _integers(tdtype, array_dtype) -> bool:
    return not tdtype.startswith("float") and np.dtype(array_dtype).kind != "f"


# Bitwise operators take integers only.
CASES = [(op, tdtype, d, ad) for op in list(OPS) + list(BITWISE) for tdtype in TENSOR_DTYPES for ad in ARRAY_DTYPES
         for d in _devices_for(ad) if op in OPS or _integers(tdtype, ad)]


@pytest.mark.parametrize("op,tdtype,device,array_dtype", CASES, ids=lambda x: getattr(x, "__name__", x))
def test_tensor_and_array_both_ways(op, tdtype, device, array_dtype):
    fn = {**OPS, **BITWISE}[op]
    t, tt = _pair(tdtype, device)
    for arr in (rng.integers(1, 5, (2, 3)).astype(array_dtype), rng.integers(1, 5, (3,)).astype(array_dtype),
                np.array(3, dtype=array_dtype)):
        ta = torch.as_tensor(arr) if arr.ndim else arr.item()  # a 0-d array is a number, as a NumPy scalar
        _check(fn(t, arr), fn(tt, ta))
        _check(fn(arr, t), fn(ta, tt))  # ndarray on the left: NumPy hands it to the tensor


NP_SCALARS = [np.float32(2.5), np.float64(0.5), np.float16(1.5), np.int64(3), np.int32(2), np.int8(2)]


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("tdtype", list(TENSOR_DTYPES))
@pytest.mark.parametrize("device", DEVICES)
def test_tensor_and_numpy_scalar_both_ways(op, tdtype, device):
    fn = OPS[op]
    t, tt = _pair(tdtype, device)
    for s in NP_SCALARS:
        _check(fn(t, s), fn(tt, s))
        _check(fn(s, t), fn(s, tt))


@pytest.mark.parametrize("device", DEVICES)
def test_numpy_bool_scalar_is_a_bool(device):
    # torch 2.13 reads np.bool_ as a float (bool tensor + np.bool_(True) is float32 there, unlike
    # + True); bessemer treats it as the Python bool it converts to.
    b = bm.tensor([True, False], device=device)
    for s in (np.bool_(True), np.bool_(False)):
        assert (b + s).dtype == bm.bool
        np.testing.assert_array_equal((b + s).to("cpu").numpy(), b.to("cpu").numpy() | bool(s))
        assert (s * b).dtype == bm.bool
    assert (bm.tensor([1, 2], device=device) * np.bool_(True)).dtype == bm.int64


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_both_ways(device):
    t, tt = _pair("float32", device, (2, 3))
    arr = rng.standard_normal((3, 4)).astype(np.float32)
    _check(t @ arr, tt @ torch.as_tensor(arr))
    arr2 = rng.standard_normal((4, 2)).astype(np.float32)
    _check(arr2 @ t, torch.as_tensor(arr2) @ tt)
    _check(np.matmul(arr2, t), torch.as_tensor(arr2) @ tt)


def test_numpy_functions_and_conversions_keep_working():
    t = bm.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.asarray(t)
    assert isinstance(a, np.ndarray)
    np.testing.assert_array_equal(a, [[1, 2], [3, 4]])
    e = np.exp(t)  # not an operator: NumPy computes it, on the tensor's values
    assert isinstance(e, np.ndarray)
    np.testing.assert_allclose(e, np.exp(a))
    s = np.add.reduce(t, axis=0)
    np.testing.assert_array_equal(s, [4, 6])
    arr = np.zeros((2, 2), np.float32)
    arr += t  # in place into the array: NumPy's out=, the array stays an array
    assert isinstance(arr, np.ndarray)
    np.testing.assert_array_equal(arr, a)
    r = np.add(arr, t)  # the operator's ufunc called by name is the operator
    assert isinstance(r, bm.Tensor)
    q, m = divmod(np.array([7.0, 8.0], np.float32), bm.tensor([2.0, 3.0]))
    assert isinstance(q, bm.Tensor) and isinstance(m, bm.Tensor)
    np.testing.assert_array_equal(q.numpy(), [3, 2])
    np.testing.assert_array_equal(m.numpy(), [1, 2])


def test_refusals_are_clear():
    t = bm.ones(2)
    with pytest.raises(TypeError, match=r"^\[numpy\] np.add: out= cannot be a bessemer tensor"):
        np.add(np.ones(2), np.ones(2), out=(t,))
    with pytest.raises(TypeError, match=r"^\[tensor\]"):
        t + np.array(["a", "b"])
    with pytest.raises(TypeError, match=r"^\[tensor\]"):
        np.array([object(), object()]) + t
    if "metal-sim" in DEVICES:
        with pytest.raises(TypeError, match="float64"):
            bm.ones(2, device="metal-sim") + np.ones(2)  # a float64 tensor cannot live on Metal
