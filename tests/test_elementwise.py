"""Elementwise semantics beyond the op table: type promotion against torch, Python numbers on either
side, NaN handling, integer pow errors, broadcasting errors and where with numbers; all on every
device. And every device computes the CPU's numbers for every elementwise row of op_cases.py on
every layout."""

from __future__ import annotations

import itertools
import operator

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer.testing import assert_close
from harness import DEVICES, LAYOUTS, dtypes_on, make_input
from op_cases import CASES

DTYPES = [bm.bool, bm.int8, bm.uint8, bm.int16, bm.int32, bm.int64, bm.float16, bm.bfloat16, bm.float32, bm.float64]
TORCH = {bm.bool: torch.bool, bm.int8: torch.int8, bm.uint8: torch.uint8, bm.int16: torch.int16,
         bm.int32: torch.int32, bm.int64: torch.int64, bm.float16: torch.float16,
         bm.bfloat16: torch.bfloat16, bm.float32: torch.float32, bm.float64: torch.float64}
FROM_TORCH = {v: k for k, v in TORCH.items()}


def pair(values, dtype, device="cpu"):
    """The same values as a bessemer tensor (on `device`) and a torch tensor of `dtype`."""
    t = torch.tensor(values).to(TORCH[dtype])
    host = t.float() if dtype == bm.bfloat16 else t  # numpy has no bfloat16; float32 holds it exactly
    return bm.tensor(host.numpy(), dtype=dtype, device=device), t


def with_devices(*dtype_lists):
    """(device, dtypes...) parameter tuples: every device with the dtypes it has (no float64 on Metal)."""
    return [(d, *ts) for d in DEVICES for ts in itertools.product(*dtype_lists)
            if all(t in dtypes_on(d, [t]) for t in ts)]


def as_numpy(x) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return (x.double() if x.dtype == torch.bfloat16 else x).numpy()
    return bm.testing.to_numpy(x)


def check_like_torch(ours, theirs, rtol=1e-6, atol=1e-6):
    """Same dtype, shape and values as torch's result."""
    assert ours.dtype == FROM_TORCH[theirs.dtype], f"dtype {ours.dtype}, torch gives {theirs.dtype}"
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert_close(ours, as_numpy(theirs), rtol, atol, check_dtype=False)


# ---- type promotion ----

# (kind, values): dimensioned tensors, 0-d tensors, and Python numbers promote differently in torch.
KINDS = ["dims", "zero_d"]
NUMBERS = [True, 3, -2.5]


@pytest.mark.parametrize("ka,kb", list(itertools.product(KINDS, KINDS)))
@pytest.mark.parametrize("device,da,db", with_devices(DTYPES, DTYPES))
def test_add_result_type_matches_torch(device, da, db, ka, kb):
    a, ta = pair([1, 0, 1] if ka == "dims" else 1, da, device)
    b, tb = pair([0, 1, 1] if kb == "dims" else 1, db, device)
    want = torch.result_type(ta, tb)
    assert (a + b).dtype == FROM_TORCH[want]
    check_like_torch(a + b, ta + tb, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("number", NUMBERS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("device,dtype", with_devices(DTYPES))
def test_number_result_type_matches_torch(device, dtype, kind, number):
    a, ta = pair([1, 0, 1] if kind == "dims" else 1, dtype, device)
    want = FROM_TORCH[torch.result_type(ta, number)]
    assert (a + number).dtype == want
    assert (number + a).dtype == want
    check_like_torch(a + number, ta + number, rtol=1e-2, atol=1e-2)
    check_like_torch(number + a, number + ta, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("device,da,db", with_devices(DTYPES, DTYPES))
def test_div_and_compare_result_types(device, da, db):
    a, ta = pair([1, 0, 3], da, device)
    b, tb = pair([2, 1, 1], db, device)
    check_like_torch(a / b, ta / tb, rtol=1e-2, atol=1e-3)  # int / int is float32
    check_like_torch(a < b, ta < tb)
    check_like_torch(a == b, ta == tb)
    check_like_torch(bm.maximum(a, b), torch.maximum(ta, tb), rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("device", DEVICES)
def test_int_division_gives_float32(device):
    q = bm.tensor([1, 2, 7], device=device) / bm.tensor([2, 4, 2], device=device)
    assert q.dtype == bm.float32
    assert q.tolist() == [0.5, 0.5, 3.5]
    assert (bm.tensor([3], dtype=bm.int32, device=device) / 2).dtype == bm.float32
    assert (bm.tensor([True, False], device=device) / 2).tolist() == [0.5, 0.0]


@pytest.mark.parametrize("device", DEVICES)
def test_unary_float_ops_promote_ints_to_float32(device):
    x = bm.tensor([1, 4], device=device)
    for fn in (bm.exp, bm.log, bm.sqrt, bm.rsqrt, bm.sin, bm.cos, bm.tanh, bm.sigmoid):
        r = fn(x)
        assert r.dtype == bm.float32, fn
        check_like_torch(r, getattr(torch, fn.__name__)(torch.tensor([1, 4])))


# ---- Python numbers on either side ----

@pytest.mark.parametrize("device,dtype", with_devices([bm.int32, bm.int64, bm.float16, bm.bfloat16, bm.float32,
                                                        bm.float64]))
@pytest.mark.parametrize("expr", [
    lambda x: 2 - x, lambda x: x - 2, lambda x: x / 3, lambda x: 3 / x, lambda x: x ** 2, lambda x: 2 ** x,
    lambda x: x * 2.5, lambda x: 0.5 + x, lambda x: x > 1, lambda x: 1 >= x, lambda x: x == 2, lambda x: x ** 0.5,
])
def test_numbers_on_either_side(device, dtype, expr):
    x, tx = pair([1, 2, 3, 4], dtype, device)
    check_like_torch(expr(x), expr(tx), rtol=1e-2, atol=1e-3)


def test_number_only_arguments_are_rejected():
    with pytest.raises(TypeError, match=r"\[add\]"):
        bm.add(1, 2)
    with pytest.raises(TypeError, match=r"\[mul\]"):
        bm.mul(bm.tensor([1.0]), "a")


# ---- integer arithmetic ----

@pytest.mark.parametrize("device", DEVICES)
def test_integer_overflow_wraps_like_torch(device):
    for dt in (bm.int32, bm.int64):
        info = np.iinfo(np.int32 if dt == bm.int32 else np.int64)
        x, tx = pair([int(info.max), int(info.min), 5], dt, device)
        check_like_torch(x + 1, tx + 1)
        check_like_torch(x * 3, tx * 3)
        check_like_torch(x - 1, tx - 1)
        check_like_torch(-x, -tx)
        check_like_torch(abs(x), tx.abs())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [bm.int32, bm.int64])
def test_integer_pow_by_squaring_matches_torch(device, dtype):
    b, tb = pair([0, 1, -1, 2, -3, 7, 3], dtype, device)
    e, te = pair([0, 5, 3, 62, 5, 20, 40], dtype, device)  # 3**40 (and 2**62 in int32) wrap like torch
    check_like_torch(b ** e, tb ** te)
    check_like_torch(b ** 3, tb ** 3)
    check_like_torch(2 ** e[:4], 2 ** te[:4])
    check_like_torch(b[::2] ** e.expand(2, 7)[:, ::2], tb[::2] ** te.expand(2, 7)[:, ::2])  # strided


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [bm.int32, bm.int64])
def test_integer_pow_negative_exponent_raises(device, dtype):
    x = bm.tensor([1, 2, 3], dtype=dtype, device=device)
    msg = r"\[pow\] integers to negative integer powers are not allowed"
    with pytest.raises(ValueError, match=msg):
        x ** -1
    with pytest.raises(ValueError, match=msg):
        x ** bm.tensor([2, -2, 2], dtype=dtype, device=device)
    with pytest.raises(ValueError, match=msg):
        bm.pow(2, bm.tensor([[0], [-1]], dtype=dtype, device=device).expand(2, 1000))
    # An exponent still being computed by queued work is checked once it exists: 5 - 6 == -1.
    e = bm.tensor([5, 5, 6], dtype=dtype, device=device)
    with pytest.raises(ValueError, match=msg):
        x ** (e - 5 - e[2:] + 5)
    assert (x ** (e - 5)).tolist() == [1, 1, 3]  # the queue still works after the error
    # Floats take negative exponents.
    assert (bm.tensor([2.0, 4.0], device=device) ** -1).tolist() == [0.5, 0.25]


@pytest.mark.parametrize("device", DEVICES)
def test_bool_add_is_or_and_mul_is_and(device):
    a = bm.tensor([True, True, False, False], device=device)
    b = bm.tensor([True, False, True, False], device=device)
    assert (a + b).dtype == bm.bool and (a + b).tolist() == [True, True, True, False]
    assert (a * b).dtype == bm.bool and (a * b).tolist() == [True, False, False, False]
    assert bm.maximum(a, b).tolist() == [True, True, True, False]
    assert bm.minimum(a, b).tolist() == [True, False, False, False]
    with pytest.raises(bm.UnsupportedError, match=r"\[sub\]"):
        a - b


@pytest.mark.parametrize("device", DEVICES)
def test_integer_clamp_saturates_out_of_range_bounds(device):
    x = bm.tensor([-5, 0, 5], dtype=bm.int32, device=device)
    assert bm.clamp(x, max=2**40).tolist() == [-5, 0, 5]
    assert bm.clamp(x, min=2**40).tolist() == [2**31 - 1] * 3
    assert bm.clamp(x, min=-2**40, max=-2**35).tolist() == [-2**31] * 3
    assert bm.clamp(x.to(bm.int64), min=-2**40, max=2).tolist() == [-5, 0, 2]
    assert bm.clamp(x, min=3, max=-1).tolist() == [-1] * 3  # lo > hi gives hi, as in torch
    # Float bounds promote the result to float32, as in torch.
    tx = torch.tensor([-5, 0, 5], dtype=torch.int32)
    r, rt = bm.clamp(x, -1e20, 1e10), torch.clamp(tx, -1e20, 1e10)
    assert r.dtype == bm.float32 and rt.dtype == torch.float32
    np.testing.assert_array_equal(r.numpy(), rt.numpy())
    # A NaN bound gives NaN everywhere: torch 2.13's semantics, which bessemer implements (torch 2.11
    # and earlier keep the input). The expectation comes from NumPy, whose maximum propagates NaN, so
    # the test does not depend on the installed torch's version; the dtype still comes from torch.
    r = bm.clamp(x, float("nan"))
    assert r.dtype == bm.float32 and torch.result_type(tx, float("nan")) == torch.float32
    expected = np.maximum(np.array([-5, 0, 5], dtype=np.float32), np.float32("nan"))
    assert np.isnan(expected).all()
    np.testing.assert_array_equal(r.numpy(), expected)


# ---- NaN and infinities ----

@pytest.mark.parametrize("device", DEVICES)
def test_nan_propagation_like_torch(device):
    vals = [float("nan"), 1.0, -2.0, float("inf"), -0.0]
    other = [0.0, float("nan"), 3.0, float("-inf"), 0.0]
    for dt in dtypes_on(device, [bm.float16, bm.bfloat16, bm.float32, bm.float64]):
        x, tx = pair(vals, dt, device)
        y, ty = pair(other, dt, device)
        for op in (bm.maximum, bm.minimum):
            check_like_torch(op(x, y), getattr(torch, op.__name__)(tx, ty))
            check_like_torch(op(y, x), getattr(torch, op.__name__)(ty, tx))
        check_like_torch(bm.relu(x), torch.relu(tx))
        check_like_torch(bm.clamp(x, -1, 0.5), torch.clamp(tx, -1, 0.5))
        # A NaN bound gives NaN (torch 2.13's semantics, which bessemer implements; torch 2.11 kept
        # the input): expected from NumPy, whose maximum propagates NaN, not from the installed torch.
        r = bm.clamp(x, min=float("nan"))
        assert r.dtype == dt and tuple(r.shape) == (len(vals),)
        expected = np.maximum(as_numpy(tx), np.nan)
        assert np.isnan(expected).all()
        assert np.isnan(bm.testing.to_numpy(r).astype(np.float64)).all()
        assert_close(r, expected, 0, 0, check_dtype=False)
        check_like_torch(bm.clamp(x, min=2, max=1), torch.clamp(tx, min=2, max=1))
        for cmp in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge):
            check_like_torch(cmp(x, y), cmp(tx, ty))
        check_like_torch(x / y, tx / ty)


@pytest.mark.parametrize("device,dtype", with_devices([bm.float32, bm.float64]))
def test_sigmoid_is_stable_for_large_inputs(device, dtype):
    x = bm.tensor([-1000.0, -100.0, -30.0, 0.0, 30.0, 100.0, 1000.0], dtype=dtype, device=device)
    r = bm.testing.to_numpy(bm.sigmoid(x)).astype(np.float64)
    assert np.all(np.isfinite(r))
    assert r[0] == 0.0 and r[-1] == 1.0 and r[3] == 0.5
    # Small results keep their relative precision (1 / (1 + exp(-x)) loses it).
    assert r[2] == pytest.approx(np.exp(-30.0) / (1 + np.exp(-30.0)), rel=1e-5)
    if dtype == bm.float64:
        assert r[1] == pytest.approx(np.exp(-100.0), rel=1e-12)


# ---- broadcasting ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn", [("add", operator.add), ("mul", operator.mul), ("lt", operator.lt),
                                     ("maximum", bm.maximum), ("pow", operator.pow)])
def test_broadcast_mismatch_names_op_and_shapes(name, fn, device):
    a, b = bm.ones(2, 3, device=device), bm.ones(4, device=device)
    with pytest.raises(ValueError, match=rf"\[{name}\].*\(2, 3\).*\(4,\)"):
        fn(a, b)


@pytest.mark.parametrize("device", DEVICES)
def test_where_broadcast_mismatch(device):
    with pytest.raises(ValueError, match=r"\[where\].*\(2, 3\).*\(4,\)"):
        bm.where(bm.ones(2, 3, device=device) > 0, bm.ones(4, device=device), 0.0)


@pytest.mark.parametrize("device", DEVICES)
def test_checks_run_device_then_dtype_then_shape(device):
    # bool - bool is unsupported *and* the shapes mismatch: the dtype error must win.
    with pytest.raises(bm.UnsupportedError, match=r"\[sub\]"):
        bm.tensor([True, False], device=device) - bm.tensor([True, False, True], device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_broadcasting_values_like_torch(device):
    a, ta = pair(np.arange(12.0).reshape(3, 1, 4).tolist(), bm.float32, device)
    b, tb = pair(np.arange(10.0).reshape(5, 2)[:, :1].tolist(), bm.float32, device)
    check_like_torch(a + b, ta + tb)
    check_like_torch(a.transpose(0, 2) * b.transpose(0, 1)[:, :, None][:1], ta.transpose(0, 2) * tb.T[:, :, None][:1])


@pytest.mark.parametrize("device", DEVICES)
def test_large_strided_ops(device):
    # Big enough for both CPU cores, with rows that straddle the chunk boundary; on a GPU, many
    # threadgroups with a partial last one.
    rng = np.random.default_rng(0)
    a = rng.standard_normal((301, 257)).astype(np.float32)
    b = rng.standard_normal((257,)).astype(np.float32)
    ta, tb = bm.tensor(a, device=device), bm.tensor(b, device=device)
    assert_close(ta.T + tb[:, None], a.T + b[:, None], 0, 0)
    assert_close(bm.maximum(ta, tb), np.maximum(a, b), 0, 0)
    assert_close(bm.where(ta > 0, ta, tb), np.where(a > 0, a, b), 0, 0)
    assert_close(bm.exp(ta.T), np.exp(a.T.astype(np.float64)), 2e-6, 1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_more_dims_than_a_kernel_takes(device):
    # 10 dims, reversed so that none can be merged: a GPU launches them as several 8-dim slices.
    rng = np.random.default_rng(0)
    shape = (2, 3, 2, 1, 3, 2, 3, 2, 3, 2)
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape[::-1]).astype(np.float32)
    perm = tuple(range(len(shape)))[::-1]
    ta, tb = bm.tensor(a, device=device).permute(*perm), bm.tensor(b, device=device)
    an = a.transpose(perm)
    assert_close(ta + tb, an + b, 0, 0)
    assert_close(bm.where(ta > tb, -ta, tb[:1]), np.where(an > b, -an, b[:1]), 0, 0)
    assert_close(bm.clamp(ta, -0.5, 0.5), np.clip(an, -0.5, 0.5), 0, 0)
    # exp through the split launches gives the bits of exp on a contiguous copy on the same device
    # (a real GPU's exp may differ from the CPU's libm in the last bit: test_every_layout... below)
    assert_close(bm.exp(ta), bm.exp(bm.tensor(np.ascontiguousarray(an), device=device)), 0, 0)


# ---- where ----

@pytest.mark.parametrize("device", DEVICES)
def test_where_with_numbers_like_torch(device):
    c, tc = pair([True, False, True], bm.bool, device)
    for a, b in [(1, 2.5), (1, 2), (True, 0), (0.5, -1.5)]:
        check_like_torch(bm.where(c, a, b), torch.where(tc, a, b))
    for dt in (bm.int32, bm.float16, bm.float32):
        x, tx = pair([1, 2, 3], dt, device)
        check_like_torch(bm.where(c, x, 0), torch.where(tc, tx, 0))
        check_like_torch(bm.where(c, 2.5, x), torch.where(tc, 2.5, tx))
    check_like_torch(bm.where(c[:, None], c, 7), torch.where(tc[:, None], tc, 7))


@pytest.mark.parametrize("device", DEVICES)
def test_where_needs_a_bool_condition(device):
    with pytest.raises(TypeError, match=r"\[where\].*bool"):
        bm.where(bm.tensor([1, 0], device=device), 1.0, 2.0)


# ---- every device computes the CPU's numbers, on every layout ----

ELEMENTWISE_OPS = {"neg", "abs", "relu", "clamp", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid",
                   "add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
                   "where",
                   # issue 12's elementwise math (tests/op_cases_elementwise.py)
                   "log1p", "expm1", "log2", "log10", "exp2", "erf", "erfinv", "sign", "floor", "ceil", "round",
                   "trunc", "frac", "nan_to_num", "isnan", "isinf", "isfinite", "logical_not", "logical_and",
                   "logical_or", "logical_xor", "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "atan2",
                   "hypot", "fmod", "lerp", "remainder", "floor_divide"}
# Real GPUs' precise:: transcendentals may differ from the CPU's libm by a few ulp (pow by more);
# the simulator calls libm, so there every bit must match. Half types compute in float32 and
# round, so they may differ by one ulp of their own.
ULP_RTOL = {bm.float32: 2e-6, bm.float16: 1e-3, bm.bfloat16: 8e-3}
# The ops whose shaders call precise:: transcendentals (libm in the simulator, libdevice on CUDA).
# Every other op is bit-identical on CUDA too: NVRTC compiles without contraction (--fmad=false),
# with IEEE division and square root, and tanh/sigmoid use the shared formulas of bm_exp_f32.h.
LIBM_OPS = {"exp", "log", "sin", "cos", "pow",
            # log1p / expm1 / erfinv: math_f32.h's formulas over precise::log / exp; atan2, log2, log10,
            # exp2: precise:: themselves. (erf, hypot, lerp, fmod and the rest are exact: own
            # formulas over fma, sqrt and IEEE arithmetic, or exact by definition.)
            "log1p", "expm1", "log2", "log10", "exp2", "erfinv", "atan2"}


def exact_on(device: str, op: str) -> bool:
    return device in ("cpu", "metal-sim:0") or (device.startswith("cuda") and op not in LIBM_OPS)


def assert_same_numbers(actual, expected, exact: bool):
    """Equal values, NaN where the other has NaN, and the same sign of zero; within ULP_RTOL when not exact."""
    a, e = bm.testing.to_numpy(actual), bm.testing.to_numpy(expected)
    assert a.dtype == e.dtype and a.shape == e.shape
    if exact or actual.dtype not in ULP_RTOL:
        np.testing.assert_array_equal(a, e)  # NaNs compare equal here
        finite = ~np.isnan(e) if e.dtype.kind == "f" else np.ones(e.shape, bool)
        np.testing.assert_array_equal(np.signbit(a[finite]), np.signbit(e[finite]), "sign of zero")
    else:
        assert_close(actual, expected, ULP_RTOL[actual.dtype], 1e-30, check_dtype=False)


@pytest.mark.parametrize("case,device,dtype", [
    pytest.param(c, d, t, id=f"{c.id}-{d}-{t.name}")
    for c in CASES if c.name in ELEMENTWISE_OPS for d in DEVICES for t in dtypes_on(d, c.dtypes)])
def test_every_layout_on_every_device_gives_the_cpu_numbers(case, device, dtype):
    """The op on each layout and device against the CPU on contiguous copies of the same values:
    strided and broadcast kernels, fast paths and backends must all agree with one another."""
    for layout in LAYOUTS:
        rng = np.random.default_rng(1)
        doms = case.domain if isinstance(case.domain, (list, tuple)) else [case.domain] * case.nin
        xs = [make_input(s, dtype, device, layout, rng, d)[0] for s, d in zip(case.input_shapes, doms)]
        with np.errstate(all="ignore"):
            actual = case.ours(*xs)
            expected = case.ours(*[x.to("cpu").contiguous() for x in xs])
        assert str(actual.device) == device
        try:
            assert_same_numbers(actual, expected, exact=exact_on(device, case.name))
        except AssertionError as err:
            raise AssertionError(f"layout {layout}: {err}") from None
