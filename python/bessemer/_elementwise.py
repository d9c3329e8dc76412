"""Elementwise math with torch's names, signatures and dtype rules: the functions (``bm.log1p``,
``bm.round(x, decimals=1)``, ``bm.lerp``...) and their Tensor methods. The operators & | ^ ~ and
&= |= ^= are bound in C++ (csrc/bindings/elementwise.cpp), like + and +=."""

from __future__ import annotations

from . import _core
from ._core import Tensor

# One registry row each (csrc/core/op_table.h), bound from the table.
log1p, expm1, log2, log10, exp2 = _core.log1p, _core.expm1, _core.log2, _core.log10, _core.exp2
erf, erfinv, sign, floor, ceil, trunc, frac = (_core.erf, _core.erfinv, _core.sign, _core.floor, _core.ceil,
                                               _core.trunc, _core.frac)
isnan, isinf, isfinite = _core.isnan, _core.isinf, _core.isfinite
logical_not, logical_and, logical_or, logical_xor = (_core.logical_not, _core.logical_and, _core.logical_or,
                                                     _core.logical_xor)
bitwise_not, bitwise_and, bitwise_or, bitwise_xor = (_core.bitwise_not, _core.bitwise_and, _core.bitwise_or,
                                                     _core.bitwise_xor)
atan2, hypot, fmod = _core.atan2, _core.hypot, _core.fmod
# Compositions in C++: 1 / x and x * x.
reciprocal, square = _core.reciprocal, _core.square
lerp = _core.lerp


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001  (torch.round)
    """Rounds half to even; ``decimals`` rounds to that many decimal places (negative: to tens,
    hundreds...), computed as torch does: round(x * 10**decimals) / 10**decimals."""
    return _core._round(input, decimals) if decimals else _core.round(input)


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf``; a missing bound is the
    dtype's largest (lowest) finite value. Integer and bool tensors come back unchanged (a copy)."""
    return _core._nan_to_num(input, nan, posinf, neginf)


def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


for _name in ("log1p", "expm1", "log2", "log10", "exp2", "erf", "erfinv", "sign", "floor", "ceil", "round", "trunc",
              "frac", "reciprocal", "square", "isnan", "isinf", "isfinite", "nan_to_num", "logical_not", "logical_and",
              "logical_or", "logical_xor", "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "atan2", "hypot",
              "fmod", "lerp"):
    setattr(Tensor, _name, _method(globals()[_name]))
