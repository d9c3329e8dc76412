"""Mixing tensors with NumPy: ``t + array``, ``array + t``, ``t * np.float32(2)``.

Binary operators with a NumPy array on either side give a bessemer tensor: the array is the
tensor ``bessemer.tensor(array)`` makes (on the other operand's device), and torch's type promotion
applies between the two. NumPy scalars (``np.float32(2)``, ``np.int64(3)``, ``np.bool_``) and 0-d
arrays are numbers, as Python's are (torch's treatment of NumPy scalars): the tensor's dtype wins
within a kind. (NumPy turns a scalar on the left of an operator into a 0-d array before it reaches
the tensor, so the two cannot be told apart there.)

``array + t`` first asks NumPy, which hands every ufunc with a tensor operand to
``Tensor.__array_ufunc__``: the operator ufuncs run as bessemer ops; other ufuncs (``np.exp(t)``,
reductions, ``out=``) run in NumPy on the tensor's values (``np.asarray(t)``) and give NumPy
results, as before. ``np.asarray(t)`` / ``__array__`` are untouched.
"""

from __future__ import annotations

import numpy as np

from ._core import Tensor

# The ufuncs behind Python's binary and unary operators, by the name of the bessemer function that
# computes them (looked up when called, so functions added later are found).
_OPERATOR_UFUNCS = {
    np.add: "add",
    np.subtract: "sub",
    np.multiply: "mul",
    np.true_divide: "div",
    np.floor_divide: "floor_divide",
    np.remainder: "remainder",
    np.power: "pow",
    np.matmul: "matmul",
    np.equal: "eq",
    np.not_equal: "ne",
    np.less: "lt",
    np.less_equal: "le",
    np.greater: "gt",
    np.greater_equal: "ge",
    np.bitwise_and: "bitwise_and",
    np.bitwise_or: "bitwise_or",
    np.bitwise_xor: "bitwise_xor",
    np.left_shift: "bitwise_left_shift",
    np.right_shift: "bitwise_right_shift",
    np.negative: "neg",
    np.positive: "positive",
    np.absolute: "abs",
    np.invert: "bitwise_not",
    np.divmod: "divmod",
}


def _array_operand(arr: np.ndarray, like: Tensor):
    """What an ndarray operand stands for: a 0-d array is the number it holds (as a NumPy scalar,
    which NumPy itself turns into a 0-d array before handing it to a ufunc); any other array is the
    tensor bessemer.tensor(arr) makes, on ``like``'s device."""
    if arr.ndim == 0 and arr.dtype.kind in "biuf":
        return arr.item()
    return _array_tensor(arr, like)


def _array_tensor(arr: np.ndarray, like: Tensor) -> Tensor:
    """bessemer.tensor(arr) on ``like``'s device (refusals, e.g. object arrays or float64 on Metal,
    name the op "tensor")."""
    from ._ops import tensor

    return tensor(arr, device=like.device)


def _divmod(a, b):
    import bessemer as bm

    return bm.floor_divide(a, b), bm.remainder(a, b)


def _array_ufunc(self: Tensor, ufunc, method: str, *inputs, **kwargs):
    name = _OPERATOR_UFUNCS.get(ufunc)
    if name is not None and method == "__call__" and not kwargs:
        import bessemer as bm

        fn = _divmod if name == "divmod" else getattr(bm, name, None)
        if fn is None:
            raise TypeError(f"[{name}] np.{ufunc.__name__} with a bessemer tensor operand: bessemer has no {name}")
        like = next(x for x in inputs if isinstance(x, Tensor))
        conv = _array_tensor if name == "matmul" else _array_operand
        args = [conv(x, like) if isinstance(x, np.ndarray) else x for x in inputs]
        # (a NumPy scalar on the left reaches here as a 0-d array: _array_operand makes it a number again)
        return fn(*args)
    # Not an operator (np.exp(t), np.add.reduce(t), out=...): NumPy computes on the values.

    def host(x):
        return np.asarray(x) if isinstance(x, Tensor) else x

    outs = kwargs.get("out", ())
    if any(isinstance(x, Tensor) for x in (outs if isinstance(outs, tuple) else (outs,))):
        # np.asarray of a tensor on another device is a copy: NumPy's write would be lost.
        raise TypeError(f"[numpy] np.{ufunc.__name__}: out= cannot be a bessemer tensor; use the bessemer op and "
                        "copy_ into the tensor")
    return getattr(ufunc, method)(*(host(x) for x in inputs), **kwargs)


Tensor.__array_ufunc__ = _array_ufunc
