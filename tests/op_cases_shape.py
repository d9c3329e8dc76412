"""Test-table rows for the shape functions (op_cases.py imports them into CASES): flip, roll,
tril / triu, gather, scatter, scatter_add, repeat, tile, repeat_interleave, masked_fill, einsum,
mm / bmm / outer and slicing with negative steps, against torch CPU (float64 / int64 / bool) on
every device, layout and dtype. The views (split, chunk, narrow, ...) and the error paths are in
test_shape_ops.py."""

from __future__ import annotations

import numpy as np

import bessemer as bm
from harness import ALL_DTYPES, FLOATS, INTS
from op_cases import Case  # noqa: F401  (op_cases is complete when it imports us)

NUMERIC = FLOATS + INTS
HALF = [bm.float16, bm.bfloat16]
WIDE = [d for d in NUMERIC if d not in HALF]


def _torch(fn):
    """The reference: fn on torch tensors made from the numpy inputs (float64 / int64 / bool)."""
    def ref(*xs):
        import torch
        return fn(*[torch.from_numpy(np.array(x)) for x in xs]).numpy()
    return ref


def _index_for(shape, dim, extra=5, smaller=True):
    """A fixed int64 index for gather / scatter into a tensor of `shape` along `dim`: `extra`
    entries along dim (with repeats), one fewer than the tensor along the other dims when
    `smaller` (torch allows index sizes up to the tensor's); values in [0, shape[dim])."""
    shape = tuple(shape) or (1,)
    if not -len(shape) <= dim < len(shape):  # a dim the op must reject: any index will do
        return np.zeros((1,) * len(shape), dtype=np.int64)
    dim %= len(shape)
    size = shape[dim]
    ishape = tuple((extra if size else 0) if d == dim else max(s - 1, 0) if smaller and s > 1 else s
                   for d, s in enumerate(shape))
    n = int(np.prod(ishape))
    return (np.arange(n, dtype=np.int64) * 7 + 3).reshape(ishape) % max(size, 1)


def _idx_t(x, dim, **kw):
    return bm.tensor(_index_for(x.shape, dim, **kw), device=x.device)


def _gather_rows():
    rows = []
    for dim in (0, 1, -1):
        rows.append(Case("gather", (lambda d: lambda x: bm.gather(x, d, _idx_t(x, d)))(dim),
                         _torch((lambda d: lambda x: x.gather(d, _np_index(x, d)))(dim)), variant=f"dim{dim}",
                         errors={"0d": IndexError} if dim == 1 else {}))
    rows.append(Case("gather", lambda x: x.gather(1, _idx_t(x, 1, smaller=False)),
                     _torch(lambda x: x.gather(1, _np_index(x, 1, smaller=False))), shape=(2, 3, 4),
                     variant="method_3d", errors={"0d": IndexError}))
    return rows


def _np_index(x, dim, **kw):
    import torch
    return torch.from_numpy(_index_for(tuple(x.shape), dim, **kw))


def _scatter_rows():
    rows = []
    for dim in (0, -1):
        # the index has repeated targets: the last one wins (torch's CPU order)
        rows.append(Case("scatter", (lambda d: lambda x, s: bm.scatter(x, d, _idx_t(x, d), s))(dim),
                         _torch((lambda d: lambda x, s: x.scatter(d, _np_index(x, d), s))(dim)), nin=2,
                         shapes=((3, 4), (6, 5)) if dim == 0 else ((3, 4), (3, 6)), variant=f"src_dim{dim}",
                         errors={"0d": ValueError}))
    rows += [
        Case("scatter", lambda x: bm.scatter(x, 1, _idx_t(x, 1), value=3),
             _torch(lambda x: x.scatter(1, _np_index(x, 1), 3)), variant="value", errors={"0d": IndexError}),
        Case("scatter", lambda x, s: x.scatter(0, _idx_t(x, 0, smaller=False), s, reduce="add"),
             _torch(lambda x, s: x.scatter_add(0, _np_index(x, 0, smaller=False), s)), nin=2, dtypes=NUMERIC,
             shapes=((3, 4), (5, 4)), variant="reduce_add", errors={"0d": ValueError}),
    ]
    for dim in (0, 1):
        rows.append(Case("scatter_add", (lambda d: lambda x, s: bm.scatter_add(x, d, _idx_t(x, d), s))(dim),
                         _torch((lambda d: lambda x, s: x.scatter_add(d, _np_index(x, d), s))(dim)), nin=2,
                         dtypes=NUMERIC, shapes=((3, 4), (6, 5)), variant=f"dim{dim}",
                         errors={"0d": IndexError if dim == 1 else ValueError}))
    return rows


def _einsum_rows():
    ein = [("ij->ji", ((3, 4),)), ("ij->", ((3, 4),)), ("ij,kj->ik", ((3, 4), (5, 4))),
           ("ij,jk", ((3, 4), (4, 5))), ("bij,bjk->bik", ((2, 3, 4), (2, 4, 5))),
           ("...ij,...jk->...ik", ((2, 3, 4), (4, 5))), ("i,j->ij", ((3,), (4,))), ("ii->i", ((4, 4),)),
           ("iji->j", ((3, 4, 3),)), ("bi,bi->b", ((3, 4), (3, 4))), ("ijk,jl,kl->li", ((2, 3, 4), (3, 5), (4, 5))),
           ("i...->...", ((3, 4),)), ("Ab,bA", ((3, 4), (4, 3)))]
    rows = []
    for eq, shapes in ein:
        errs = {}
        if any(len(s) > 0 for s in shapes) and "..." not in eq:
            errs["0d"] = ValueError
        if eq in ("ij,jk", "bij,bjk->bik", "...ij,...jk->...ik", "ii->i", "Ab,bA", "iji->j", "ijk,jl,kl->li"):
            errs["empty"] = ValueError  # the "empty" layout shrinks only the last dim: sizes stop matching
        if eq in ("...ij,...jk->...ik", "i...->..."):
            errs["0d"] = ValueError
        ours = (lambda e: lambda *xs: bm.einsum(e, *xs))(eq)
        ref = _torch((lambda e: lambda *xs: __import__("torch").einsum(e, *xs))(eq))
        vid = eq.replace("->", "_to_").replace(",", "_").replace("...", "E")
        if len(shapes) == 1:
            rows.append(Case("einsum", ours, ref, dtypes=NUMERIC, shapes=shapes, variant=vid, errors=errs))
            continue
        # contractions round their intermediate results to the dtype: half types get a wider tolerance
        rows.append(Case("einsum", ours, ref, nin=len(shapes), dtypes=WIDE, shapes=shapes, variant=vid, errors=errs))
        rows.append(Case("einsum", ours, ref, nin=len(shapes), dtypes=HALF, shapes=shapes, variant=vid + "_half",
                         errors=errs, tol=(1e-1, 1e-1)))
    return rows


def _mask(x):
    shape = tuple(x.shape)
    return np.asarray(np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % 3 == 0)


_NOT_2D = {"0d": ValueError}

_CASES: list[Case] = [
    Case("flip", lambda x: bm.flip(x, 0), _torch(lambda x: x.flip(0)), variant="dim0"),
    Case("flip", lambda x: x.flip((0, -1)), _torch(lambda x: x.flip((0, -1))), shape=(2, 3, 4), variant="dims0_-1",
         errors={"0d": ValueError}),
    Case("index", lambda x: x[::-1], lambda x: x[::-1], variant="neg_step", errors={"0d": IndexError}),
    Case("index", lambda x: x[1:, ::-2], lambda x: x[1:, ::-2], variant="neg_step2", errors={"0d": IndexError}),
    Case("index", lambda x: x[-1:0:-2, ..., 2::-1], lambda x: x[-1:0:-2, ..., 2::-1], shape=(4, 2, 5),
         variant="neg_step3", errors={"0d": IndexError}),
    Case("roll", lambda x: bm.roll(x, 1, 0), _torch(lambda x: x.roll(1, 0)), variant="dim0",
         errors={"0d": IndexError}),
    Case("roll", lambda x: x.roll((2, -5), (0, 1)), _torch(lambda x: x.roll((2, -5), (0, 1))), variant="dims01",
         errors={"0d": IndexError}),
    Case("roll", lambda x: bm.roll(x, 3), _torch(lambda x: x.roll(3)), variant="flat"),
    Case("tril", bm.tril, _torch(lambda x: x.tril()), errors=_NOT_2D),
    Case("tril", lambda x: x.tril(1), _torch(lambda x: x.tril(1)), shape=(2, 3, 4), variant="diag1", errors=_NOT_2D),
    Case("triu", lambda x: bm.triu(x, diagonal=-1), _torch(lambda x: x.triu(-1)), errors=_NOT_2D),
    Case("triu", lambda x: x.triu(2), _torch(lambda x: x.triu(2)), shape=(4, 3), variant="diag2", errors=_NOT_2D),
    *_gather_rows(),
    *_scatter_rows(),
    Case("repeat", lambda x: x.repeat(2, 1, 3), _torch(lambda x: x.repeat(2, 1, 3)), shape=(3, 4)),
    Case("repeat", lambda x: x.repeat((2, 3)), _torch(lambda x: x.repeat((2, 3))), shape=(4,), variant="1d"),
    Case("tile", lambda x: bm.tile(x, (2,)), _torch(lambda x: x.tile((2,)))),
    Case("repeat_interleave", lambda x: bm.repeat_interleave(x, 2), _torch(lambda x: x.repeat_interleave(2)),
         variant="flat"),
    Case("repeat_interleave", lambda x: x.repeat_interleave(3, dim=-1), _torch(lambda x: x.repeat_interleave(3, -1)),
         variant="dim", errors={"0d": IndexError}),
    Case("repeat_interleave", lambda x: x.repeat_interleave(bm.tensor([1, 0, 2], device=x.device), dim=0),
         _torch(lambda x: x.repeat_interleave(__import__("torch").tensor([1, 0, 2]), dim=0)), variant="tensor",
         errors={"0d": IndexError}),
    Case("masked_fill", lambda x: bm.masked_fill(x, bm.tensor(_mask(x), device=x.device), 2),
         _torch(lambda x: x.masked_fill(__import__("torch").from_numpy(_mask(x)), 2))),
    Case("masked_fill", lambda x: x.masked_fill(bm.tensor(True, device=x.device), bm.tensor(-1.5, device=x.device)),
         _torch(lambda x: x.masked_fill(__import__("torch").tensor(True), -1.5)), dtypes=list(FLOATS),
         variant="0d_mask"),
    Case("mm", bm.mm, _torch(lambda a, b: a.mm(b)), nin=2, dtypes=NUMERIC, shapes=((3, 4), (4, 5)),
         errors={"0d": ValueError, "empty": ValueError}),
    Case("bmm", lambda a, b: a.bmm(b), _torch(lambda a, b: a.bmm(b)), nin=2, dtypes=NUMERIC,
         shapes=((2, 3, 4), (2, 4, 5)), errors={"0d": ValueError, "empty": ValueError}),
    Case("outer", bm.outer, _torch(lambda a, b: a.outer(b)), nin=2, dtypes=list(ALL_DTYPES), shapes=((3,), (4,)),
         errors={"0d": ValueError}),
    *_einsum_rows(),
]


def shape_cases() -> list[Case]:
    return list(_CASES)
