"""Module-level functions with torch's signatures, over the core's ops."""

from __future__ import annotations

import builtins
from collections import namedtuple

import numpy as np

from . import _core
from ._core import Tensor

_dt = _core.dtype

# Python data -> dtype, as torch.tensor infers it: floats become the default float dtype.
_NUMPY_TO_BM = {
    np.dtype(np.bool_): _dt.bool,
    np.dtype(np.int8): _dt.int8,
    np.dtype(np.uint8): _dt.uint8,
    np.dtype(np.int16): _dt.int16,
    np.dtype(np.int32): _dt.int32,
    np.dtype(np.int64): _dt.int64,
    np.dtype(np.float16): _dt.float16,
    np.dtype(np.float32): _dt.float32,
    np.dtype(np.float64): _dt.float64,
}
_BM_TO_NUMPY = {v: k for k, v in _NUMPY_TO_BM.items()}

values_indices = namedtuple("values_indices", ["values", "indices"])
# torch.return_types.max / .min: named like torch's, so repr and type names read the same.
_RETURN_TYPES = {"amax": namedtuple("max", ["values", "indices"]), "amin": namedtuple("min", ["values", "indices"])}


def _sizes(size, op: str) -> list[int]:
    """f(2, 3) / f((2, 3)) / f([2, 3]) as a list; a size beyond 64 bits names ``op`` (the core names
    the function it is called through, which for bm.zeros is full)."""
    sizes = list(size[0]) if len(size) == 1 and not isinstance(size[0], builtins.int) else list(size)
    for s in sizes:
        if isinstance(s, builtins.int) and not -(2**63) <= s < 2**63:
            raise ValueError(f"[{op}] size {s} does not fit in 64 bits (signed)")
    return sizes


def _requires_grad(t: Tensor, requires_grad: bool) -> Tensor:
    return t.requires_grad_() if requires_grad else t


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, numpy arrays or tensors)."""
    return _requires_grad(_tensor(data, dtype, device), requires_grad)


def _tensor(data, dtype, device) -> Tensor:
    if isinstance(data, Tensor):
        data = data.detach()
        out = data.to(device) if device is not None else data.clone()
        return out.to(dtype) if dtype is not None else out
    from_python = not isinstance(data, (np.ndarray, np.generic))
    try:
        arr = np.asarray(data)
    except ValueError as e:  # ragged nested lists
        raise ValueError(f"[tensor] could not make a tensor from the data: {e}") from None
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise TypeError(f"[tensor] cannot make a tensor from {type(data).__name__} data of numpy dtype {arr.dtype}; "
                        "supported: bool, integer and float (16, 32, 64-bit) arrays")
    if not arr.dtype.isnative:  # '>f4' on a little-endian machine: NumPy converts the values
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if dtype is not None and dtype in _BM_TO_NUMPY:
        # The asked dtype straight from the source values (cheaper on the host than a device cast,
        # and exact: [0.1] asked as float64 never passes through float32)
        arr = arr.astype(_BM_TO_NUMPY[dtype])
    elif from_python and arr.dtype == np.float64:
        default = _core.get_default_dtype()  # Python floats: bm.get_default_dtype(), as torch
        arr = arr.astype(np.float32) if default == _dt.bfloat16 else arr.astype(_BM_TO_NUMPY[default])
        if dtype is None and default == _dt.bfloat16:  # numpy has none: the core casts from float32
            dtype = default
    elif arr.dtype == np.uint64:  # no uint64 dtype: int64 when every value fits, else refused
        if arr.size and arr.max() > np.iinfo(np.int64).max:
            raise OverflowError(f"[tensor] value {arr.max()} does not fit in int64 (bessemer has no unsigned 64-bit "
                                "dtype)")
        arr = arr.astype(np.int64)
    elif arr.dtype.kind in "iu" and arr.dtype not in _NUMPY_TO_BM:
        arr = arr.astype(np.int64)  # uint16/uint32: every value fits in int64
    elif arr.dtype not in _NUMPY_TO_BM:
        raise TypeError(f"[tensor] numpy dtype {arr.dtype} is not supported; supported: bool, int8-64, uint8-64, "
                        "float16, float32, float64")
    if dtype == _dt.bfloat16 and arr.dtype == np.float64:
        # numpy has no bfloat16: the core casts, from float32 (float64 does not exist on Metal)
        arr = arr.astype(np.float32)
    t = _core._from_numpy_copy(arr, device)
    return t if dtype is None else t.to(dtype)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    t = _core.full(_sizes((size,), "full"), fill_value, dtype, device)
    return _requires_grad(t, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    t = _core.full(_sizes(size, "zeros"), 0, dtype or _core.get_default_dtype(), device)
    return _requires_grad(t, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    t = _core.full(_sizes(size, "ones"), 1, dtype or _core.get_default_dtype(), device)
    return _requires_grad(t, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _requires_grad(_core.empty(_sizes(size, "empty"), dtype, device), requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    if end is None:
        start, end = 0, start
    return _requires_grad(_core.arange(start, end, step, dtype, device), requires_grad)


def _dims(dim):
    if dim is None:
        return None
    return [dim] if isinstance(dim, builtins.int) else list(dim)


def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    x = input if dtype is None else input.to(dtype)
    return x._reduce("sum", _dims(dim), keepdim)


def mean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    x = input if dtype is None else input.to(dtype)
    return x._reduce("mean", _dims(dim), keepdim)


def var(input: Tensor, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """torch.var: var(x, dim=None, *, correction=1, keepdim=False); also the older forms
    var(x, dim, unbiased, keepdim) and var(x, unbiased). N - correction <= 0 gives inf/nan."""
    if isinstance(dim, builtins.bool):  # var(x, unbiased)
        dim, unbiased = None, dim
    if correction is not None and unbiased is not None:
        raise TypeError("[var] give either correction or unbiased, not both")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return input._reduce("var", _dims(dim), keepdim, float(correction))


def amax(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    return input._reduce("amax", _dims(dim), keepdim)


def amin(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    return input._reduce("amin", _dims(dim), keepdim)


def argmax(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    return _core.arg_reduce(input, "argmax", dim, keepdim)


def argmin(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    return _core.arg_reduce(input, "argmin", dim, keepdim)


def _max_min(input, dim, keepdim, other, reduce_op, arg_op, binary_op):
    if isinstance(dim, Tensor):  # torch.max(a, b) is maximum
        return binary_op(input, dim)
    if other is not None:
        return binary_op(input, other)
    if dim is None:
        return input._reduce(reduce_op, None, False)
    if not isinstance(dim, builtins.int) or isinstance(dim, builtins.bool):
        # as torch: max/min take one dim (amax/amin take several)
        raise TypeError(f"[{reduce_op[1:]}] dim must be an int, got {type(dim).__name__}; "
                        f"use {reduce_op}(x, dim=...) to reduce over several dims")
    # torch's max(dim) accepts bool (argmax alone does not): find the indices on 0/1 integers
    src = input.to(_dt.int32) if input.dtype == _dt.bool else input
    indices = _core.arg_reduce(src, arg_op, dim, keepdim)
    if input.requires_grad and _core.is_grad_enabled() and input.ndim > 0:
        # torch sends max(dim)'s gradient to the chosen index only (amax splits it between ties):
        # pick the element with a one-hot mask, so the recorded where/sum route it there.
        d = dim % input.ndim
        shape = [1] * input.ndim
        shape[d] = input.shape[d]
        pos = _core.arange(0, input.shape[d], 1, _dt.int64, input.device).reshape(shape)
        hit = pos == (indices if keepdim else indices.unsqueeze(d))
        values = _core.where(hit, input, 0).sum(dim=d, keepdim=keepdim)
        return _RETURN_TYPES[reduce_op](values, indices)
    return _RETURN_TYPES[reduce_op](input._reduce(reduce_op, [dim], keepdim), indices)


def max(input: Tensor, dim=None, keepdim: bool = False, *, other=None):
    """max(x) -> tensor; max(x, dim) -> (values, indices); max(x, y) -> maximum(x, y)."""
    return _max_min(input, dim, keepdim, other, "amax", "argmax", _core.maximum)


def min(input: Tensor, dim=None, keepdim: bool = False, *, other=None):
    """min(x) -> tensor; min(x, dim) -> (values, indices); min(x, y) -> minimum(x, y)."""
    return _max_min(input, dim, keepdim, other, "amin", "argmin", _core.minimum)


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    return _core.softmax(input if dtype is None else input.to(dtype), dim)


def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    return _core.log_softmax(input if dtype is None else input.to(dtype), dim)


def clamp(input: Tensor, min=None, max=None) -> Tensor:
    return _core.clamp(input, min, max)


def reshape(input: Tensor, shape) -> Tensor:
    return input.reshape(shape)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return input.transpose(dim0, dim1)


def permute(input: Tensor, dims) -> Tensor:
    return input.permute(dims)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    return input.unsqueeze(dim)


def squeeze(input: Tensor, dim=None) -> Tensor:
    return input.squeeze(dim)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    return input.flatten(start_dim, end_dim)


def cat(tensors, dim: int = 0) -> Tensor:
    return _core.cat(list(tensors), dim)


def stack(tensors, dim: int = 0) -> Tensor:
    return _core.stack(list(tensors), dim)


matmul = _core.matmul
where = _core.where
add, sub, mul, div, pow = _core.add, _core.sub, _core.mul, _core.div, _core.pow
maximum, minimum = _core.maximum, _core.minimum
eq, ne, lt, le, gt, ge = _core.eq, _core.ne, _core.lt, _core.le, _core.gt, _core.ge
neg, abs, relu = _core.neg, _core.abs, _core.relu
relu_ = _core.relu_  # torch.relu_: in place
exp, log, sqrt, rsqrt = _core.exp, _core.log, _core.sqrt, _core.rsqrt
sin, cos, tanh, sigmoid = _core.sin, _core.cos, _core.tanh, _core.sigmoid


# ---- indexing, floor_divide / remainder, any / all ----

def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """Rows ``index`` (0-d or 1-D, int32/int64, values in [0, size)) of ``input`` along ``dim``."""
    return _core.index_select(input, dim, index)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """Out of place: ``input`` with ``alpha * source``'s slices added at ``index`` along ``dim``;
    duplicate indices accumulate in index order (deterministic)."""
    if not (isinstance(alpha, builtins.int) and not isinstance(alpha, builtins.bool) and alpha == 1):
        source = source * alpha
    return _core.index_add(input, dim, index, source)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """Out of place: a copy of ``input`` with slices ``index`` along ``dim`` replaced by ``source``'s."""
    return _core.index_copy_(input.clone(), dim, index, source)


def nonzero(input: Tensor, *, as_tuple: bool = False):
    """Indices of the nonzero elements: int64 (n, ndim), row-major order; ``as_tuple``: one 1-D
    tensor per dim (a 0-d input counts as 1-D, as torch)."""
    if not as_tuple:
        return _core.nonzero(input)
    x = input.reshape(1) if input.ndim == 0 else input
    nz = _core.nonzero(x)
    return tuple(nz[:, d] for d in range(x.ndim))


def any(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001  (torch.any)
    """True where any element (over ``dim``: None, an int or a tuple) is nonzero; bool output."""
    return _core.any(input, _dims(dim), keepdim)


def all(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001  (torch.all)
    """True where every element (over ``dim``: None, an int or a tuple) is nonzero; bool output."""
    return _core.all(input, _dims(dim), keepdim)


floor_divide, remainder = _core.floor_divide, _core.remainder
