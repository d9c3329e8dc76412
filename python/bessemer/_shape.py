"""Shape functions, gather / scatter and einsum with torch's names, signatures and defaults.

Views stay views where torch's are (t, mT, narrow, movedim, swapaxes, split, chunk, unbind,
diagonal): they are argument conveniences over the core's view ops. flip, roll, tril / triu, gather,
scatter and scatter_add are the core's (core/ops_shape.h): compositions of registry rows with
strided kernels on every backend. einsum is in _einsum.py.
"""

from __future__ import annotations

import builtins

from . import _core, _ops
from ._core import Tensor
from ._einsum import einsum  # noqa: F401  (bm.einsum)

_int = builtins.int
_bool = builtins.bool


def _is_int(x) -> _bool:
    return isinstance(x, _int) and not isinstance(x, _bool)


def _wrap(op: str, dim, ndim: _int) -> _int:
    """A dim in [-ndim, ndim) (a 0-d tensor takes -1 and 0) as a non-negative dim."""
    if not _is_int(dim):
        raise TypeError(f"[{op}] dim must be an int, got {type(dim).__name__}")
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"[{op}] dim {dim} is out of range for a tensor with {ndim} dims "
                         f"(expected in [{-n}, {n - 1}])")
    return dim % n


def _int_list(x) -> list:
    return [x] if _is_int(x) else list(x)


def _slice_along(x: Tensor, dim: _int, start: _int, stop: _int) -> Tensor:
    return x[(slice(None),) * dim + (slice(start, stop),)]


# ---- transposes and dim moves (views) ----

def t(input: Tensor) -> Tensor:
    """The transpose of a 2-D tensor; a 0-d or 1-D tensor is returned as is (a view)."""
    if input.ndim > 2:
        raise ValueError(f"[t] expects a tensor with <= 2 dims, got {input.ndim} dims; use .mT or .transpose()")
    return input.transpose(0, 1) if input.ndim == 2 else input.view(*input.shape) if input.ndim else input.reshape(())


def _mT(self: Tensor) -> Tensor:
    if self.ndim < 2:
        raise ValueError(f"[mT] expects a tensor with at least 2 dims, got {self.ndim} dims")
    return self.transpose(-2, -1)


def swapaxes(input: Tensor, axis0: _int, axis1: _int) -> Tensor:
    return input.transpose(axis0, axis1)


def swapdims(input: Tensor, dim0: _int, dim1: _int) -> Tensor:
    return input.transpose(dim0, dim1)


def movedim(input: Tensor, source, destination) -> Tensor:
    """Moves the dims ``source`` to the positions ``destination`` (ints or sequences); a view."""
    src, dst = _int_list(source), _int_list(destination)
    if len(src) != len(dst):
        raise ValueError(f"[movedim] source and destination must have the same number of dims, got {len(src)} and "
                         f"{len(dst)}")
    nd = input.ndim
    src = [_wrap("movedim", d, nd) for d in src]
    dst = [_wrap("movedim", d, nd) for d in dst]
    for name, ds in (("source", src), ("destination", dst)):
        if len(set(ds)) != len(ds):
            raise ValueError(f"[movedim] repeated dim in {name}: {ds}")
    if nd == 0:
        return input.view(())
    order = [-1] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in src)
    order = [o if o >= 0 else next(rest) for o in order]
    return input.permute(order)


moveaxis = movedim


def diagonal(input: Tensor, offset: _int = 0, dim1: _int = 0, dim2: _int = 1) -> Tensor:
    """The diagonal (``offset`` above the main one) of dims dim1 and dim2, as the last dim; a view."""
    return _core.diagonal(input, offset, dim1, dim2)


# ---- products ----

def mm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.ndim != 2 or mat2.ndim != 2:
        raise ValueError(f"[mm] expects two 2-D tensors, got {input.ndim}-D and {mat2.ndim}-D")
    _check_inner("mm", input, mat2)
    return _core.matmul(input, mat2)


def _check_inner(op: str, a: Tensor, b: Tensor) -> None:
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"[{op}] shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied "
                         f"({a.shape[-1]} != {b.shape[-2]})")


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    if input.ndim != 3 or mat2.ndim != 3:
        raise ValueError(f"[bmm] expects two 3-D tensors, got {input.ndim}-D and {mat2.ndim}-D")
    if input.shape[0] != mat2.shape[0]:
        raise ValueError(f"[bmm] batch sizes differ: {input.shape[0]} and {mat2.shape[0]}")
    _check_inner("bmm", input, mat2)
    return _core.matmul(input, mat2)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """input[i] * vec2[j] (type promotion as mul)."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise ValueError(f"[outer] expects two 1-D tensors, got {input.ndim}-D and {vec2.ndim}-D")
    return _core.mul(input.unsqueeze(1), vec2.unsqueeze(0))


ger = outer


# ---- splitting (views) ----

def narrow(input: Tensor, dim: _int, start, length: _int) -> Tensor:
    """Elements [start, start + length) along ``dim``; a view. ``start`` may be negative or a 0-d tensor."""
    if input.ndim == 0:
        raise ValueError("[narrow] cannot narrow a 0-d tensor")
    d = _wrap("narrow", dim, input.ndim)
    size = input.shape[d]
    if isinstance(start, Tensor):
        start = _int(start.item())
    if not -size <= start <= size:
        raise IndexError(f"[narrow] start {start} is out of range for dimension {d} with size {size}")
    start = start + size if start < 0 else start
    if length < 0 or start + length > size:
        raise ValueError(f"[narrow] start ({start}) + length ({length}) exceeds dimension {d} with size {size}")
    return _slice_along(input, d, start, start + length)


def split(tensor: Tensor, split_size_or_sections, dim: _int = 0) -> tuple:
    """Pieces of ``split_size`` along ``dim`` (the last one smaller), or of the listed sizes; views."""
    if tensor.ndim == 0:
        raise ValueError("[split] cannot split a 0-d tensor")
    d = _wrap("split", dim, tensor.ndim)
    size = tensor.shape[d]
    if _is_int(split_size_or_sections):
        s = split_size_or_sections
        if s < 0 or (s == 0 and size != 0):
            raise ValueError(f"[split] split_size must be positive, got {s}")
        sizes = [s] * (size // s) + ([size % s] if size % s else []) if s else [0]
    else:
        sizes = [_int(v) for v in split_size_or_sections]
        if builtins.sum(sizes) != size or builtins.any(v < 0 for v in sizes):
            raise ValueError(f"[split] split sizes {sizes} must be non-negative and sum to {size}, the size of dim {d}")
    out, start = [], 0
    for v in sizes:
        out.append(_slice_along(tensor, d, start, start + v))
        start += v
    return tuple(out)


def chunk(input: Tensor, chunks: _int, dim: _int = 0) -> tuple:
    """At most ``chunks`` views of ceil(size / chunks) along ``dim`` (as torch: possibly fewer)."""
    if not _is_int(chunks) or chunks <= 0:
        raise ValueError(f"[chunk] chunks must be a positive int, got {chunks}")
    if input.ndim == 0:
        raise ValueError("[chunk] cannot chunk a 0-d tensor")
    size = input.shape[_wrap("chunk", dim, input.ndim)]
    if size == 0:
        return split(input, [0] * chunks, dim)
    return split(input, -(-size // chunks), dim)


def unbind(input: Tensor, dim: _int = 0) -> tuple:
    """The slices along ``dim``, each without that dim; views."""
    if input.ndim == 0:
        raise ValueError("[unbind] cannot unbind a 0-d tensor")
    d = _wrap("unbind", dim, input.ndim)
    return tuple(input[(slice(None),) * d + (i,)] for i in range(input.shape[d]))


# ---- copies that rearrange ----

def flip(input: Tensor, dims) -> Tensor:
    return _core.flip(input, _int_list(dims))


def fliplr(input: Tensor) -> Tensor:
    if input.ndim < 2:
        raise ValueError("[fliplr] expects a tensor with at least 2 dims")
    return _core.flip(input, [1])


def flipud(input: Tensor) -> Tensor:
    if input.ndim < 1:
        raise ValueError("[flipud] expects a tensor with at least 1 dim")
    return _core.flip(input, [0])


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    return _core.roll(input, _int_list(shifts), None if dims is None else _int_list(dims))


def _repeat(self: Tensor, *sizes) -> Tensor:
    """Tensor.repeat: the tensor tiled sizes[i] times along each dim (leading sizes add dims)."""
    reps = list(sizes[0]) if len(sizes) == 1 and not _is_int(sizes[0]) else list(sizes)
    if len(reps) < self.ndim:
        raise ValueError(f"[repeat] the number of repeat dims ({len(reps)}) cannot be smaller than the number of "
                         f"tensor dims ({self.ndim})")
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"[repeat] repeats cannot be negative, got {reps}")
    shape = [1] * (len(reps) - self.ndim) + list(self.shape)
    x = self.reshape(shape)
    inter, big = [], []
    for r, s in zip(reps, shape):
        inter += [1, s]
        big += [r, s]
    # (1, s0, 1, s1, ...) expanded to (r0, s0, r1, s1, ...) and merged: one copy
    return x.reshape(inter).expand(*big).reshape([r * s for r, s in zip(reps, shape)])


def tile(input: Tensor, dims) -> Tensor:
    reps = _int_list(dims)
    return _repeat(input, [1] * (input.ndim - len(reps)) + reps)


def repeat_interleave(input: Tensor, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """Each element (slice along ``dim``; flattened when None) repeated ``repeats`` times (an int or
    a tensor of one value per element). repeat_interleave(repeats) alone gives the indices."""
    if repeats is None:  # torch.repeat_interleave(repeats): 0,..,0 (repeats[0] times), 1, ...
        return _core._repeat_interleave_index(input)
    if dim is not None and input.ndim == 0:
        raise IndexError("[repeat_interleave] a 0-d input has no dim to repeat along; pass dim=None")
    x = input.reshape(-1) if dim is None else input
    if x.ndim == 0:
        x = x.reshape(1)
    d = 0 if dim is None else _wrap("repeat_interleave", dim, x.ndim)
    if isinstance(repeats, Tensor):
        out = _core.index_select(x, d, _core._repeat_interleave_index(repeats, x.shape[d]))
    else:
        if not _is_int(repeats) or repeats < 0:
            raise ValueError(f"[repeat_interleave] repeats must be a non-negative int or a tensor, got {repeats!r}")
        shape = list(x.shape)
        big = shape[:d + 1] + [repeats] + shape[d + 1:]
        out = x.unsqueeze(d + 1).expand(*big).flatten(d, d + 1)
    if output_size is not None and out.shape[d] != output_size:
        raise ValueError(f"[repeat_interleave] output_size {output_size} does not match the result's size "
                         f"{out.shape[d]}")
    return out


def tril(input: Tensor, diagonal: _int = 0) -> Tensor:
    return _core.tril(input, diagonal)


def triu(input: Tensor, diagonal: _int = 0) -> Tensor:
    return _core.triu(input, diagonal)


# ---- gather / scatter / masks ----

def gather(input: Tensor, dim: _int, index: Tensor, *, sparse_grad: _bool = False) -> Tensor:
    """out[...i...] = input[...index[...i...]... along dim]; index values in [0, size) (IndexError)."""
    return _core.gather(input, dim, index)


def scatter(input: Tensor, dim: _int, index: Tensor, src=None, *, value=None, reduce=None) -> Tensor:
    """Out of place: ``input`` with src's elements (or ``value``) written at ``index`` along ``dim``.
    Duplicate targets: the last in the index's row-major order wins; reduce='add' adds them."""
    if (src is None) == (value is None):
        raise TypeError("[scatter] give exactly one of src and value")
    return _core.scatter(input, dim, index, src if src is not None else value, reduce)


def scatter_add(input: Tensor, dim: _int, index: Tensor, src: Tensor) -> Tensor:
    """Out of place: ``input`` plus src's elements added at ``index`` along ``dim``, duplicates in
    index order (deterministic)."""
    return _core.scatter_add(input, dim, index, src)


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """``input`` with ``value`` (a number or a 0-d tensor, cast to input's dtype) where ``mask``."""
    if not isinstance(mask, Tensor) or mask.dtype != _core.dtype.bool:
        got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
        raise TypeError(f"[masked_fill] mask must be a bool tensor, got {got}")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"[masked_fill] value must be a number or a 0-d tensor, got shape {tuple(value.shape)}")
        v = value.to(input.dtype)
    else:
        try:
            v = _core.full([], value, input.dtype, input.device)
        except RuntimeError as e:  # the value overflows input's dtype: name this op, as torch
            raise RuntimeError(str(e).replace("[full]", "[masked_fill]", 1)) from None
    out = _core.where(mask, v, input)
    if tuple(out.shape) != tuple(input.shape):
        raise ValueError(f"[masked_fill] mask of shape {tuple(mask.shape)} does not broadcast to the input's shape "
                         f"{tuple(input.shape)}")
    return out


def where(condition: Tensor, input=None, other=None):
    """where(cond, input, other): elementwise choice; where(cond): nonzero(cond, as_tuple=True)."""
    if input is None and other is None:
        return _ops.nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("[where] give both input and other, or neither")
    return _core.where(condition, input, other)


# ---- in-place variants (computed out of place, then copied in: autograd sees one copy_) ----

def _inplace(name: str, fn):
    def method(self: Tensor, *args, **kwargs) -> Tensor:
        self._check_writable(name)  # before anything is computed
        return _core.copy_(self, fn(self, *args, **kwargs))

    method.__name__ = name
    method.__doc__ = f"In place: {fn.__name__}."
    return method


# ---- Tensor methods ----

_METHODS = {
    "t": t,
    "swapaxes": swapaxes,
    "swapdims": swapdims,
    "movedim": movedim,
    "moveaxis": movedim,
    "diagonal": diagonal,
    "mm": mm,
    "bmm": bmm,
    "outer": outer,
    "ger": outer,
    "narrow": narrow,
    "split": split,
    "chunk": chunk,
    "unbind": unbind,
    "flip": flip,
    "fliplr": fliplr,
    "flipud": flipud,
    "roll": roll,
    "repeat": _repeat,
    "tile": tile,
    "repeat_interleave": repeat_interleave,
    "tril": tril,
    "triu": triu,
    "gather": gather,
    "scatter": scatter,
    "scatter_add": scatter_add,
    "masked_fill": masked_fill,
    "where": lambda self, condition, other: _core.where(condition, self, other),
}
for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)
Tensor.mT = property(_mT)
for _name, _fn in (("tril_", tril), ("triu_", triu), ("scatter_", scatter), ("scatter_add_", scatter_add),
                   ("masked_fill_", masked_fill)):
    setattr(Tensor, _name, _inplace(_name, _fn))
