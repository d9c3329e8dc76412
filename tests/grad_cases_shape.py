"""Gradient rows for the shape functions (grad_cases.py imports them into CASES): each is the same
expression in bessemer and in torch (float64), run by test_autograd_ops.py on every device, layout
and float dtype, second derivatives included."""

from __future__ import annotations

import torch

import bessemer as bm
from grad_cases import _NOT_0D, _NOT_0D_OR_EMPTY, GradCase
from op_cases import CASES as _OP_CASES  # noqa: F401  (op_cases first: it imports op_cases_shape)
from op_cases_shape import _index_for

_ALL_BUT_BROADCAST = ("contiguous", "transposed", "sliced", "offset", "0d", "empty")


def _bi(x, dim, **kw):
    return bm.tensor(_index_for(tuple(x.shape), dim, **kw), device=x.device)


def _ti(x, dim, **kw):
    return torch.from_numpy(_index_for(tuple(x.shape), dim, **kw))


def shape_grad_cases() -> list[GradCase]:
    return [
        GradCase("flip", lambda x: bm.flip(x, (0, 1)), lambda x: torch.flip(x, (0, 1)), layouts=_NOT_0D),
        GradCase("flip", lambda x: x[::-1, ::-2] * 1.0, lambda x: x.flip(0).flip(1)[:, ::2] * 1.0, variant="neg_step",
                 layouts=_NOT_0D),
        GradCase("roll", lambda x: x.roll((1, -2), (0, 1)), lambda x: x.roll((1, -2), (0, 1)), layouts=_NOT_0D),
        GradCase("roll", lambda x: bm.roll(x, 5), lambda x: torch.roll(x, 5), variant="flat"),
        GradCase("tril", lambda x: bm.tril(x, 1), lambda x: torch.tril(x, 1), layouts=_NOT_0D),
        GradCase("triu", lambda x: x.triu(-1), lambda x: x.triu(-1), layouts=_NOT_0D),
        GradCase("gather", lambda x: bm.gather(x, 1, _bi(x, 1)), lambda x: torch.gather(x, 1, _ti(x, 1)),
                 layouts=_NOT_0D),
        GradCase("gather", lambda x: x.gather(0, _bi(x, 0)), lambda x: x.gather(0, _ti(x, 0)), variant="dim0"),
        # no duplicate targets here: with duplicates torch's rule (followed by ours) gives every
        # duplicate src element the gradient, though only the last one written reaches the output
        GradCase("scatter", lambda x, s: bm.scatter(x, 1, _bi(x, 1, extra=3), s),
                 lambda x, s: torch.scatter(x, 1, _ti(x, 1, extra=3), s), ((3, 4), (2, 3)), layouts=_NOT_0D),
        GradCase("scatter", lambda x: x.scatter(0, _bi(x, 0), value=2.0), lambda x: x.scatter(0, _ti(x, 0), 2.0),
                 variant="value"),
        GradCase("scatter_add", lambda x, s: bm.scatter_add(x, 0, _bi(x, 0), s),
                 lambda x, s: torch.scatter_add(x, 0, _ti(x, 0), s), ((3, 4), (5, 3)), layouts=_NOT_0D),
        GradCase("repeat", lambda x: x.repeat(2, 1, 3), lambda x: x.repeat(2, 1, 3)),
        GradCase("tile", lambda x: x.tile((2,)), lambda x: x.tile((2,))),
        GradCase("repeat_interleave", lambda x: x.repeat_interleave(2, dim=0),
                 lambda x: x.repeat_interleave(2, dim=0), layouts=_NOT_0D),
        GradCase("repeat_interleave", lambda x: x.repeat_interleave(bm.tensor([2, 0, 1], device=x.device), dim=0),
                 lambda x: x.repeat_interleave(torch.tensor([2, 0, 1]), dim=0), variant="tensor", layouts=_NOT_0D),
        GradCase("masked_fill", lambda x: x.masked_fill(x > 0, -1.0), lambda x: x.masked_fill(x > 0, -1.0)),
        GradCase("einsum", lambda a, b: bm.einsum("ij,kj->ik", a, b), lambda a, b: torch.einsum("ij,kj->ik", a, b),
                 ((3, 4), (5, 4)), layouts=_NOT_0D),
        GradCase("einsum", lambda a: bm.einsum("ii->i", a), lambda a: torch.einsum("ii->i", a), ((4, 4),),
                 variant="diag", layouts=_NOT_0D_OR_EMPTY),
        GradCase("einsum", lambda a, b, c: bm.einsum("bij,jk,bk->bi", a, b, c),
                 lambda a, b, c: torch.einsum("bij,jk,bk->bi", a, b, c), ((2, 3, 4), (4, 5), (2, 5)),
                 variant="three", layouts=_NOT_0D_OR_EMPTY),
        GradCase("mm", bm.mm, torch.mm, ((3, 4), (4, 5)), layouts=_NOT_0D_OR_EMPTY),
        GradCase("bmm", bm.bmm, torch.bmm, ((2, 3, 4), (2, 4, 5)), layouts=_NOT_0D_OR_EMPTY),
        GradCase("outer", bm.outer, torch.outer, ((3,), (4,)), layouts=_NOT_0D),
        GradCase("view_ops", lambda x: bm.diagonal(x, 1) * 1.0, lambda x: torch.diagonal(x, 1) * 1.0,
                 variant="diagonal", layouts=_NOT_0D),
        GradCase("view_ops", lambda x: bm.stack(list(x.t().unbind(1)), 0) * 1.0,
                 lambda x: torch.stack(list(x.t().unbind(1)), 0) * 1.0, variant="t_unbind", layouts=_NOT_0D),
        GradCase("view_ops", lambda x: bm.cat([p * (i + 1) for i, p in enumerate(x.split([1, 2], 0))], 0),
                 lambda x: torch.cat([p * (i + 1) for i, p in enumerate(x.split([1, 2], 0))], 0), variant="split",
                 layouts=_NOT_0D),
        GradCase("view_ops", lambda x: bm.cat([p * (i + 1) for i, p in enumerate(x.chunk(2, 1))], 1),
                 lambda x: torch.cat([p * (i + 1) for i, p in enumerate(x.chunk(2, 1))], 1), variant="chunk",
                 layouts=_ALL_BUT_BROADCAST[:4]),
        GradCase("view_ops", lambda x: x.unsqueeze(0).movedim(0, -1).narrow(1, 1, 2).swapaxes(0, 1) * 1.0,
                 lambda x: x.unsqueeze(0).movedim(0, -1).narrow(1, 1, 2).swapaxes(0, 1) * 1.0,
                 variant="movedim_narrow", layouts=_NOT_0D_OR_EMPTY),
    ]
