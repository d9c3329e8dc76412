"""Shape functions, gather / scatter and einsum with torch's names, signatures and defaults.

Views stay views where torch's are (t, mT, narrow, movedim, swapaxes, split, chunk, unbind,
diagonal): they are argument conveniences over the core's view ops. flip, roll, tril / triu, gather,
scatter and scatter_add are the core's (core/ops_shape.h): compositions of registry rows with
strided kernels on every backend. einsum plans on the labels (never on elements) and lowers to
diagonal views, sums, permutes, reshapes and batched matmul.
"""

from __future__ import annotations

import builtins

from . import _core, _ops
from ._core import Tensor

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
        v = _core.full([], value, input.dtype, input.device)
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


# ---- einsum ----

def _einsum_parse(op: str, term: str, ndim: _int, k: _int):
    """Labels of one operand term: letters, and '0', '1', ... for the dims '...' covers
    (right-aligned: ellipsis dim j of E in all is labelled str(E - n + j) later)."""
    if term.count("...") > 1 or term.replace("...", "").count("."):
        raise ValueError(f"[{op}] operand {k}: '.' may only appear as one '...'")
    head, _, tail = term.partition("...") if "..." in term else (term, "", "")
    for ch in head + tail:
        if not ch.isalpha() or not ch.isascii():
            raise ValueError(f"[{op}] invalid subscript '{ch}' in the equation (expected letters a-z, A-Z)")
    if "..." not in term:
        if len(term) != ndim:
            raise ValueError(f"[{op}] the equation has {len(term)} subscripts for operand {k}, which has {ndim} dims")
        return list(term), 0
    n_ell = ndim - len(head) - len(tail)
    if n_ell < 0:
        raise ValueError(f"[{op}] the equation has {len(head) + len(tail)} subscripts and '...' for operand {k}, "
                         f"which has {ndim} dims")
    return list(head) + [None] * n_ell + list(tail), n_ell


def einsum(equation: str, *operands) -> Tensor:
    """torch.einsum: 'ij,jk->ik', implicit outputs, '...', repeated subscripts (diagonals)."""
    op = "einsum"
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError(f"[{op}] must be given at least one operand")
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise ValueError(f"[{op}] the equation has more than one '->'")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"[{op}] the equation has {len(terms)} operands but {len(operands)} tensors were given")
    parsed = [_einsum_parse(op, term, x.ndim, k) for k, (term, x) in enumerate(zip(terms, operands))]
    n_ell = builtins.max(n for _, n in parsed)
    labels_of = []
    for labels, n in parsed:  # ellipsis dims right-aligned against the widest one
        it = iter(str(n_ell - n + j) for j in range(n))
        labels_of.append([lab if lab is not None else next(it) for lab in labels])
    ell = [str(j) for j in range(n_ell)]
    if arrow:
        if rhs.count("...") > 1 or rhs.replace("...", "").count("."):
            raise ValueError(f"[{op}] the output: '.' may only appear as one '...'")
        head, dots, tail = rhs.partition("...")
        for ch in head + tail:
            if not ch.isalpha() or not ch.isascii():
                raise ValueError(f"[{op}] invalid subscript '{ch}' in the output (expected letters a-z, A-Z)")
        out_labels = list(head) + (ell if dots else []) + list(tail)
        if len(set(out_labels)) != len(out_labels):
            raise ValueError(f"[{op}] a subscript appears more than once in the output '{rhs}'")
        every = {lab for labs in labels_of for lab in labs}
        for lab in out_labels:
            if lab not in every:
                raise ValueError(f"[{op}] output subscript '{lab}' does not appear in any operand")
    else:  # implicit: '...' dims, then the letters seen exactly once, in ASCII order (as torch)
        counts = {}
        for labs in labels_of:
            for lab in labs:
                counts[lab] = counts.get(lab, 0) + 1
        out_labels = ell + sorted(lab for lab, c in counts.items() if c == 1 and lab.isalpha())

    # 1. diagonals of repeated subscripts within one operand (views)
    xs = []
    for k, (x, labs) in enumerate(zip(operands, labels_of)):
        labs = list(labs)
        while True:
            dup = next((lab for lab in labs if labs.count(lab) > 1), None)
            if dup is None:
                break
            i = labs.index(dup)
            j = labs.index(dup, i + 1)
            if x.shape[i] != x.shape[j]:
                raise ValueError(f"[{op}] subscript {dup} is repeated for operand {k} but the sizes don't match, "
                                 f"{x.shape[j]} != {x.shape[i]}")
            x = _core.diagonal(x, 0, i, j)
            labs = [lab for m, lab in enumerate(labs) if m not in (i, j)] + [dup]
        xs.append((x, labs))

    # sizes: equal, or 1 (broadcast), per label
    size = {}
    for x, labs in xs:
        for lab, s in zip(labs, x.shape):
            if lab in size and size[lab] != s and s != 1 and size[lab] != 1:
                raise ValueError(f"[{op}] operands do not broadcast: subscript '{lab}' has sizes {size[lab]} and {s}")
            if s != 1 or lab not in size:
                size[lab] = s

    def reduce_unneeded(x, labs, needed):
        drop = [i for i, lab in enumerate(labs) if lab not in needed]
        if not drop:
            return x, labs
        return _sum_keep_dtype(x, drop), [lab for lab in labs if lab in needed]

    # 2. contract left to right: batch dims, the first's own, the second's own, summed dims
    x, labs = xs[0]
    for m in range(1, len(xs) + 1):
        later = set(out_labels)
        for _, ls in xs[m:]:
            later.update(ls)
        if m == len(xs):
            x, labs = reduce_unneeded(x, labs, later)
            break
        y, ylabs = xs[m]
        x, labs = reduce_unneeded(x, labs, later | set(ylabs))
        y, ylabs = reduce_unneeded(y, ylabs, later | set(labs))
        shared = [lab for lab in labs if lab in ylabs]
        batch = [lab for lab in shared if lab in later]
        summed = [lab for lab in shared if lab not in later]
        # a summed dim of size 1 on one side only: sum the other side first (broadcasting)
        for lab in summed:
            sx, sy = x.shape[labs.index(lab)], y.shape[ylabs.index(lab)]
            if sx != sy:
                if sx == 1:
                    y = _sum_keep_dtype(y, [ylabs.index(lab)], keepdim=True)
                else:
                    x = _sum_keep_dtype(x, [labs.index(lab)], keepdim=True)
        a_own = [lab for lab in labs if lab not in ylabs]
        b_own = [lab for lab in ylabs if lab not in labs]
        bsz = [builtins.max(x.shape[labs.index(lab)], y.shape[ylabs.index(lab)]) for lab in batch]
        ksz = [x.shape[labs.index(lab)] for lab in summed]
        asz = [x.shape[labs.index(lab)] for lab in a_own]
        bosz = [y.shape[ylabs.index(lab)] for lab in b_own]
        xp = x.permute([labs.index(lab) for lab in batch + a_own + summed]).expand(*bsz, *asz, *ksz)
        yp = y.permute([ylabs.index(lab) for lab in batch + summed + b_own]).expand(*bsz, *ksz, *bosz)
        nb, na, nk, no = (_prod(v) for v in (bsz, asz, ksz, bosz))
        r = _core.matmul(xp.reshape(nb, na, nk), yp.reshape(nb, nk, no))
        x, labs = r.reshape(bsz + asz + bosz), batch + a_own + b_own

    # 3. the output's order (a label broadcast away in every operand keeps size 1)
    return x.permute([labs.index(lab) for lab in out_labels]) if labs else x


def _sum_keep_dtype(x: Tensor, dims, keepdim: _bool = False) -> Tensor:
    """A sum in einsum keeps the operand's dtype (torch: an int32 einsum is int32)."""
    s = x.sum(dim=dims, keepdim=keepdim)
    return s if s.dtype == x.dtype else s.to(x.dtype)


def _prod(v) -> _int:
    p = 1
    for s in v:
        p *= s
    return p


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
