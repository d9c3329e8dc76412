"""Test-table rows for the elementwise math of issue 12 (op_cases.py imports them into CASES):
log1p expm1 log2 log10 exp2 erf erfinv sign floor ceil round trunc frac nan_to_num, the predicates
isnan isinf isfinite, logical_* and bitwise_*, atan2 hypot fmod lerp, and the compositions
reciprocal and square. References are NumPy on float64/int64/bool data, or torch in float64 where
NumPy has no such function (erf, erfinv). More against torch (dtype rules, special values,
accuracy in ulps, errors, operators) in tests/test_elementwise_math.py."""

from __future__ import annotations

import numpy as np

import bessemer as bm
from harness import FLOATS, INTS
from op_cases import Case, f64  # noqa: F401  (op_cases is complete when it imports us)

INTEGRAL = INTS + [bm.bool]


_SIGNED = [d for d in INTS if d != bm.uint8]

def _torch64(name):
    """torch.<name> on the float64 values (NumPy has no erf / erfinv)."""
    def ref(x):
        import torch
        return getattr(torch, name)(torch.from_numpy(np.array(x, dtype=np.float64))).numpy()  # a writable copy
    return ref


def _sign(x):
    if x.dtype == bool:
        return x
    return np.where(np.isnan(x), 0, np.sign(x))  # torch: sign(NaN) = 0


def _with_specials(xp):
    """Inputs with NaN, +inf and -inf among the values (xp: bm or np), the same on both sides."""
    def make(x):
        w = bm.where if xp is bm else np.where
        nan, inf = float("nan"), float("inf")
        return w(x > 1.5, inf, w(x < -1.5, -inf, w(x > 0, w(x < 0.5, nan, x), x)))
    return make


_bm_specials, _np_specials = _with_specials(bm), _with_specials(np)


def _nonzero(xp):
    return lambda b: (bm.where if xp is bm else np.where)(b == 0, 1, b)


def elementwise_cases() -> list[Case]:
    nz_bm, nz_np = _nonzero(bm), _nonzero(np)
    return [
        # ---- float functions: bool/int inputs give the default float dtype ----
        Case("log1p", bm.log1p, f64(np.log1p), out="float"),  # x < -1: NaN, -1: -inf
        Case("expm1", bm.expm1, f64(np.expm1), out="float"),
        Case("log2", bm.log2, f64(np.log2), out="float", domain="pos"),
        Case("log2", bm.log2, f64(np.log2), out="float", variant="any"),  # 0: -inf, negatives: NaN
        Case("log10", bm.log10, f64(np.log10), out="float", domain="pos"),
        Case("exp2", bm.exp2, f64(np.exp2), out="float"),
        Case("erf", bm.erf, _torch64("erf"), out="float"),
        # "unit": (-1, 1); integers round to -1, 0, 1, whose erfinv is -inf, 0, inf
        Case("erfinv", bm.erfinv, _torch64("erfinv"), out="float", domain="unit"),
        Case("erfinv", lambda x: x.erfinv(), _torch64("erfinv"), out="float", domain="unit", variant="method"),
        # ---- rounding: integers come back unchanged; bool is refused (as torch) except by sign ----
        Case("sign", bm.sign, _sign),
        Case("sign", lambda x: bm.sign(_bm_specials(x)), lambda x: _sign(_np_specials(x)), dtypes=list(FLOATS),
             variant="specials"),
        Case("floor", bm.floor, np.floor, dtypes=FLOATS + INTS),
        Case("ceil", bm.ceil, np.ceil, dtypes=FLOATS + INTS),
        Case("trunc", bm.trunc, np.trunc, dtypes=FLOATS + INTS),
        Case("trunc", lambda x: x.trunc(), np.trunc, dtypes=FLOATS + INTS, variant="method"),
        Case("round", bm.round, np.round, dtypes=FLOATS + INTS),  # half to even, as np.round
        Case("round", lambda x: bm.round(x * 2), lambda x: np.round(x * 2), dtypes=list(FLOATS), domain="small",
             variant="halves"),  # many exact .5 cases
        *[Case("round", (lambda k: lambda x: bm.round(x, decimals=k))(d), (lambda k: lambda x: np.round(x, k))(d),
               dtypes=list(FLOATS), variant=f"decimals{d}") for d in (1, 3, -1)],
        Case("frac", bm.frac, lambda x: x - np.trunc(x), dtypes=list(FLOATS)),
        Case("nan_to_num", lambda x: bm.nan_to_num(_bm_specials(x), nan=1.5, posinf=100.0, neginf=-200.0),
             lambda x: np.nan_to_num(_np_specials(x), nan=1.5, posinf=100.0, neginf=-200.0), dtypes=list(FLOATS)),
        Case("nan_to_num", bm.nan_to_num, lambda x: x, dtypes=list(INTEGRAL), variant="integral"),
        # ---- predicates and logical ops: any dtype, bool output ----
        Case("isnan", lambda x: bm.isnan(_bm_specials(x)), lambda x: np.isnan(_np_specials(x)), dtypes=list(FLOATS),
             out="bool"),
        Case("isnan", bm.isnan, lambda x: np.zeros(x.shape, bool), dtypes=list(INTEGRAL), out="bool",
             variant="integral"),
        Case("isinf", lambda x: bm.isinf(_bm_specials(x)), lambda x: np.isinf(_np_specials(x)), dtypes=list(FLOATS),
             out="bool"),
        Case("isinf", bm.isinf, lambda x: np.zeros(x.shape, bool), dtypes=list(INTEGRAL), out="bool",
             variant="integral"),
        Case("isfinite", lambda x: bm.isfinite(_bm_specials(x)), lambda x: np.isfinite(_np_specials(x)),
             dtypes=list(FLOATS), out="bool"),
        Case("isfinite", bm.isfinite, lambda x: np.ones(x.shape, bool), dtypes=list(INTEGRAL), out="bool",
             variant="integral"),
        Case("logical_not", bm.logical_not, np.logical_not, domain="exp", out="bool"),
        Case("logical_and", bm.logical_and, np.logical_and, nin=2, domain="exp", out="bool"),
        Case("logical_or", bm.logical_or, np.logical_or, nin=2, domain="exp", out="bool"),
        Case("logical_xor", bm.logical_xor, np.logical_xor, nin=2, domain="exp", out="bool"),
        Case("logical_xor", lambda a: bm.logical_xor(a, 2), lambda a: np.logical_xor(a, 2), domain="exp", out="bool",
             variant="scalar"),
        # ---- bitwise: integers and bool ----
        Case("bitwise_not", bm.bitwise_not, np.invert, dtypes=list(INTEGRAL)),
        Case("bitwise_not", lambda x: ~x, np.invert, dtypes=list(INTEGRAL), variant="operator"),
        Case("bitwise_and", bm.bitwise_and, np.bitwise_and, nin=2, dtypes=list(INTEGRAL)),
        Case("bitwise_and", lambda a, b: a & b, np.bitwise_and, nin=2, dtypes=list(INTEGRAL), variant="operator"),
        Case("bitwise_or", lambda a, b: a | b, np.bitwise_or, nin=2, dtypes=list(INTEGRAL)),
        Case("bitwise_xor", lambda a, b: a ^ b, np.bitwise_xor, nin=2, dtypes=list(INTEGRAL)),
        Case("bitwise_and", lambda x: 6 & x, lambda x: 6 & x, dtypes=list(INTS), variant="rscalar"),
        Case("bitwise_xor", lambda x: x ^ True, lambda x: x ^ True, dtypes=list(INTEGRAL), variant="scalar"),
        # ---- binary float functions ----
        Case("atan2", bm.atan2, f64(np.arctan2), nin=2, out="float"),
        Case("atan2", lambda a, b: a.atan2(b), f64(np.arctan2), nin=2, shapes=((3, 4), (4,)), out="float",
             variant="broadcast"),
        Case("hypot", bm.hypot, np.hypot, nin=2, dtypes=list(FLOATS)),
        Case("fmod", lambda a, b: bm.fmod(a, nz_bm(b)), lambda a, b: np.fmod(a, nz_np(b)), nin=2, dtypes=FLOATS + INTS,
             domain=("any", "small")),
        # a negative number with a uint8 tensor wraps to the dtype (torch: -3 -> 253), which NumPy's
        # reference does not: uint8 is compared with torch in test_elementwise_math.py
        Case("fmod", lambda x: bm.fmod(x, -3), lambda x: np.fmod(x, -3), dtypes=FLOATS + _SIGNED, variant="scalar"),
        Case("fmod", lambda x: x.fmod(2.5), lambda x: np.fmod(x, 2.5), dtypes=list(FLOATS), variant="method"),
        Case("lerp", bm.lerp, lambda s, e, w: s + w * (e - s), nin=3, dtypes=list(FLOATS),
             domain=("any", "any", "small")),
        Case("lerp", lambda s, e: bm.lerp(s, e, 0.3), lambda s, e: s + 0.3 * (e - s), nin=2, dtypes=list(FLOATS),
             variant="scalar_weight"),
        Case("lerp", lambda s, e, w: s.lerp(e, w), lambda s, e, w: s + w * (e - s), nin=3, dtypes=list(FLOATS),
             shapes=((3, 4), (4,), (3, 1)), variant="broadcast"),
        # ---- compositions: reciprocal = 1 / x (div), square = x * x (mul) ----
        Case("div", bm.reciprocal, f64(lambda x: 1 / x), out="float", variant="reciprocal"),
        Case("mul", bm.square, np.square, dtypes=FLOATS + INTS, variant="square"),
        Case("mul", bm.square, lambda x: np.square(x.astype(np.int64)), dtypes=[bm.bool], out="int64",
             variant="square_bool"),
        # ---- remainder / floor_divide as operators and functions with a number on either side ----
        Case("remainder", lambda x: 7 % nz_bm(x), lambda x: np.remainder(7, nz_np(x)), dtypes=FLOATS + INTS,
             variant="rscalar"),
        Case("remainder", lambda x: bm.remainder(-7.5, nz_bm(x)), lambda x: np.remainder(-7.5, nz_np(x)),
             dtypes=list(FLOATS), variant="fn_rscalar"),
        Case("floor_divide", lambda x: -9 // nz_bm(x), lambda x: np.floor_divide(-9, nz_np(x)), dtypes=FLOATS + _SIGNED,
             variant="rscalar"),
        Case("floor_divide", lambda a, b: a // nz_bm(b), lambda a, b: np.floor_divide(a, nz_np(b)), nin=2,
             dtypes=FLOATS + INTS, domain=("any", "small"), variant="operator"),
    ]

