"""Reductions, scans, sorting and comparisons with torch's signatures, over the core's ops
(csrc/core/ops_stats.h, csrc/core/ops_scan.h): argument conveniences only."""

from __future__ import annotations

import builtins
from collections import namedtuple

from . import _core
from ._core import Tensor

# torch.return_types.<name>: (values, indices) named tuples.
sort_result = namedtuple("sort", ["values", "indices"])
topk_result = namedtuple("topk", ["values", "indices"])
median_result = namedtuple("median", ["values", "indices"])


def _dims(dim):
    if dim is None:
        return None
    return [dim] if isinstance(dim, builtins.int) else list(dim)


def _correction(op, dim, unbiased, correction):
    if isinstance(dim, builtins.bool):  # std(x, unbiased)
        dim, unbiased = None, dim
    if correction is not None and unbiased is not None:
        raise TypeError(f"[{op}] give either correction or unbiased, not both")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, builtins.float(correction)


def std(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """torch.std: sqrt(var), std(x, dim=None, *, correction=1, keepdim=False); also the older forms
    std(x, dim, unbiased, keepdim) and std(x, unbiased). Floating inputs only."""
    dim, corr = _correction("std", dim, unbiased, correction)
    return _core.std(input, _dims(dim), corr, keepdim)


def prod(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of every element, or along one dim; bool/int -> int64 unless ``dtype`` is given."""
    return _core.prod(input, dim, keepdim, dtype)


def logsumexp(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over ``dim`` (an int or a tuple; None: every dim), computed stably."""
    return _core.logsumexp(input, _dims(dim), keepdim)


def _ord(op, p):
    if isinstance(p, str):
        if p == "fro":
            return 2.0
        raise ValueError(f"[{op}] unsupported norm type {p!r}: vector norms take a number or 'fro'")
    return builtins.float(p)


def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """torch.norm: the vector p-norm over ``dim`` (all elements by default); 'fro' is the 2-norm."""
    return _core.vector_norm(input, _ord("norm", p), _dims(dim), keepdim, dtype)


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """torch.linalg.vector_norm: ord 2 (default), inf, -inf, 0 (count of nonzeros) or any float."""
    return _core.vector_norm(x, _ord("linalg.vector_norm", ord), _dims(dim), keepdim, dtype)


def cumsum(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Inclusive cumulative sum along ``dim``; bool/int -> int64 unless ``dtype`` is given."""
    return _core.cumsum(input, dim, dtype)


def cumprod(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Inclusive cumulative product along ``dim``; bool/int -> int64 unless ``dtype`` is given."""
    return _core.cumprod(input, dim, dtype)


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False):
    """(values, indices) sorted along ``dim``; always stable; NaN sorts as the largest value."""
    return sort_result(*_core.sort(input, dim, descending))


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The int64 indices that sort ``input`` along ``dim`` (stable; NaN as the largest value)."""
    return _core.argsort(input, dim, descending)


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
    """(values, indices) of the ``k`` largest (or smallest) elements along ``dim``, in sorted order
    (also when ``sorted=False``, which leaves the order unspecified in torch)."""
    return topk_result(*_core.topk(input, k, dim, largest))


def median(input: Tensor, dim=None, keepdim: bool = False):
    """The lower median: of every element (a 0-d tensor), or along ``dim`` as (values, indices).
    NaN propagates, as torch."""
    if dim is None:
        return _core.median(input)
    return median_result(*_core.median_dim(input, dim, keepdim))


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim=None):
    """The unique elements (or slices along ``dim``) in ascending order, with the inverse indices
    and counts when asked. The comparisons run on the host: a tensor on a GPU device is copied
    back first (its queue is waited for); the results are on the input's device."""
    values, inverse, counts = _core.unique(input, return_inverse, return_counts, dim)
    if not return_inverse and not return_counts:
        return values
    out = [values]
    if return_inverse:
        out.append(inverse)
    if return_counts:
        out.append(counts)
    return tuple(out)


def count_nonzero(input: Tensor, dim=None) -> Tensor:
    """int64 count of the nonzero elements over ``dim`` (an int or a tuple; None: every dim)."""
    return _core.count_nonzero(input, _dims(dim))


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """|input - other| <= atol + rtol * |other| elementwise (equal infinities are close; NaN only
    with ``equal_nan``); both inputs of one dtype, broadcasting."""
    return _core.isclose(input, other, rtol, atol, equal_nan)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """True when every element of ``isclose(input, other, ...)`` is."""
    return _core.allclose(input, other, rtol, atol, equal_nan)


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both tensors have the same shape and elements (NaN is not equal to itself)."""
    return _core.equal(input, other)



METHODS = ("std", "prod", "logsumexp", "norm", "cumsum", "cumprod", "sort", "argsort", "topk", "median", "unique",
           "count_nonzero", "isclose", "allclose", "equal")
