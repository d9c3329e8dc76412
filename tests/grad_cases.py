"""The gradient test table: one row per differentiable registry op (and per composite with a rule
of its own), run by test_autograd_ops.py on every device, layout and float dtype against torch's
gradients in float64. test_autograd_ops.py also checks that every registry row with a gradient rule
has a row here.

Row fields: the registry op the row covers, ours (bessemer fn of the inputs), ref (torch fn of
the inputs), input shapes, the input domain, and layouts the row skips (ops whose inputs are not
elementwise-shaped take only some layouts).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

import bessemer as bm


@dataclass
class GradCase:
    op: str  # registry op name this row covers
    ours: Callable
    ref: Callable
    shapes: tuple = ((3, 4),)
    domain: str | tuple = "any"
    variant: str = ""
    layouts: tuple | None = None  # None: every layout
    double_backward: bool = True  # second derivatives also checked against torch

    @property
    def id(self) -> str:
        return self.op + (f"[{self.variant}]" if self.variant else "")


_NOT_0D = ("contiguous", "transposed", "sliced", "offset", "broadcast", "empty")
_NOT_EMPTY = ("contiguous", "transposed", "sliced", "offset", "broadcast", "0d")
_NOT_0D_OR_EMPTY = ("contiguous", "transposed", "sliced", "offset", "broadcast")


def _unary(op, domain="any", fn=None, tfn=None, **kw):
    return GradCase(op, fn or getattr(bm, op), tfn or getattr(torch, op), ((3, 4),), domain, **kw)


def _binary(op, fn=None, tfn=None, shapes=((3, 4), (3, 4)), variant="", domain="any", **kw):
    return GradCase(op, fn or getattr(bm, op), tfn or getattr(torch, op), shapes, domain, variant, **kw)


CASES = [
    GradCase("copy", lambda x: x.to(bm.float32).to(x.dtype) * 1.0, lambda x: x * 1.0, variant="cast"),
    GradCase("copy", lambda x: x.clone(), lambda x: x.clone(), variant="clone"),
    _unary("neg"),
    _unary("abs"),
    _unary("relu"),
    GradCase("clamp", lambda x: bm.clamp(x, -0.5, 0.7), lambda x: torch.clamp(x, -0.5, 0.7)),
    GradCase("clamp", lambda x: bm.clamp(x, min=-0.5), lambda x: torch.clamp(x, min=-0.5), variant="min"),
    _unary("exp", "small"),
    _unary("log", "pos"),
    _unary("sqrt", "pos"),
    _unary("rsqrt", "pos"),
    _unary("sin"),
    _unary("cos"),
    _unary("tanh"),
    _unary("sigmoid"),
    _binary("add"),
    _binary("add", shapes=((3, 4), (4,)), variant="broadcast"),
    GradCase("add", lambda x: x + 2.5, lambda x: x + 2.5, variant="scalar"),
    _binary("sub"),
    GradCase("sub", lambda x: 1.5 - x, lambda x: 1.5 - x, variant="rscalar"),
    _binary("mul"),
    _binary("mul", shapes=((2, 3, 4), (3, 1)), variant="broadcast"),
    GradCase("mul", lambda x: x * 3.0, lambda x: x * 3.0, variant="scalar"),
    _binary("div", domain=("any", "pos")),
    GradCase("div", lambda x: 2.0 / x, lambda x: 2.0 / x, domain="pos", variant="rscalar"),
    _binary("pow", domain=("pos", "small")),
    GradCase("pow", lambda x: x**3, lambda x: x**3, variant="scalar_exp"),
    GradCase("pow", lambda x: 2.0**x, lambda x: 2.0**x, domain="small", variant="scalar_base"),
    _binary("maximum"),
    _binary("minimum", shapes=((3, 4), (1, 4)), variant="broadcast"),
    GradCase("remainder", bm.remainder, torch.remainder, ((3, 4), (3, 4)), domain=("any", "pos"),
             double_backward=False),  # floor(a / b) is piecewise constant
    GradCase("floor_divide", lambda a, b: bm.floor_divide(a, b) + a,
             lambda a, b: torch.floor_divide(a.detach(), b.detach()) + a,  # torch: no derivative; ours: zero
             ((3, 4), (3, 4)), domain=("any", "pos"), double_backward=False),
    GradCase("where", lambda a, b: bm.where(a > b, a, b), lambda a, b: torch.where(a > b, a, b), ((3, 4), (3, 4))),
    GradCase("sum", lambda x: x.sum(), lambda x: x.sum()),
    GradCase("sum", lambda x: x.sum(dim=1, keepdim=True) if x.ndim > 1 else x.sum(0, keepdim=True),
             lambda x: x.sum(dim=1, keepdim=True) if x.ndim > 1 else x.sum(0, keepdim=True), variant="dim"),
    GradCase("mean", lambda x: x.mean(), lambda x: x.mean()),
    GradCase("mean", lambda x: x.mean(dim=(0, 1)), lambda x: x.mean(dim=(0, 1)), ((2, 3, 4),), variant="dims",
             layouts=("contiguous", "transposed", "sliced", "offset", "broadcast")),
    GradCase("var", lambda x: x.var(), lambda x: x.var(), layouts=_NOT_0D_OR_EMPTY),  # n - 1 = 0: nan, as torch
    GradCase("var", lambda x: x.var(dim=0, correction=0, keepdim=True),
             lambda x: x.var(dim=0, correction=0, keepdim=True), variant="dim", layouts=_NOT_0D_OR_EMPTY),
    GradCase("amax", lambda x: x.amax(), lambda x: x.amax(), layouts=_NOT_EMPTY),  # empty: an error, as torch
    GradCase("amax", lambda x: x.amax(dim=-1), lambda x: x.amax(dim=-1), variant="dim", layouts=_NOT_EMPTY),
    GradCase("amin", lambda x: x.amin(dim=0, keepdim=True), lambda x: x.amin(dim=0, keepdim=True)),
    GradCase("gelu", bm.nn.functional.gelu, torch.nn.functional.gelu),
    GradCase("gelu_tanh", lambda x: bm.nn.functional.gelu(x, approximate="tanh"),
             lambda x: torch.nn.functional.gelu(x, approximate="tanh")),
    GradCase("silu", bm.nn.functional.silu, torch.nn.functional.silu),
    GradCase("softmax", lambda x: bm.softmax(x, dim=-1), lambda x: torch.softmax(x, dim=-1)),
    GradCase("log_softmax", lambda x: bm.log_softmax(x, dim=0), lambda x: torch.log_softmax(x, dim=0)),
    # ---- ops outside the registry: views, contiguous, cat, stack (nodes of their own) ----
    GradCase("view_ops", lambda x: x.T.reshape(-1).unsqueeze(0).expand(2, -1).flatten() * 1.0,
             lambda x: x.T.reshape(-1).unsqueeze(0).expand(2, -1).flatten() * 1.0, layouts=_NOT_0D),
    GradCase("view_ops", lambda x: x.permute(1, 0)[1:, ::2].contiguous().squeeze() * 1.0,
             lambda x: x.permute(1, 0)[1:, ::2].contiguous().squeeze() * 1.0, variant="slice", layouts=_NOT_0D),
    GradCase("view_ops", lambda x: x[1][None, ..., 2:] * 1.0, lambda x: x[1][None, ..., 2:] * 1.0, variant="select",
             layouts=_NOT_0D),
    GradCase("cat", lambda a, b: bm.cat([a, b * 2], 0), lambda a, b: torch.cat([a, b * 2], 0), ((2, 3), (3, 3)),
             layouts=_NOT_0D),
    GradCase("stack", lambda a, b: bm.stack([a, b], -1), lambda a, b: torch.stack([a, b], -1), ((2, 3), (2, 3))),
    GradCase("matmul", bm.matmul, torch.matmul, ((3, 4), (4, 5)), layouts=("contiguous", "transposed", "sliced",
                                                                            "offset", "broadcast")),
    GradCase("matmul", bm.matmul, torch.matmul, ((4,), (4, 5)), variant="vec_mat",
             layouts=("contiguous", "sliced", "offset")),
    GradCase("matmul", bm.matmul, torch.matmul, ((3, 4), (4,)), variant="mat_vec",
             layouts=("contiguous", "sliced", "offset")),
    GradCase("matmul", bm.matmul, torch.matmul, ((4,), (4,)), variant="dot", layouts=("contiguous", "sliced")),
    GradCase("matmul", bm.matmul, torch.matmul, ((2, 1, 3, 4), (3, 4, 2)), variant="batched_broadcast",
             layouts=("contiguous", "sliced", "offset")),
]

# Registry rows whose gradients are tested in files of their own (nn ops with backward kernels),
# by the test that covers them.
NN_GRAD_ROWS: dict[str, str] = {
    op: "tests/test_nn_autograd.py"
    for op in ("conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "batch_norm", "layer_norm", "nll_loss",
               "embedding")
} | {op: "tests/test_autograd_index.py" for op in ("index_select", "index_add")} | {
    "dropout": "tests/test_nn_autograd.py"
}

# ---- issue 12's reductions, scans and sorting: the prod / cumsum / cumprod rows' rules, and the
# compositions whose gradients come from other rows (std, logsumexp, norm; sort / topk / median
# values through take_along_dim's index_select; max / min along a dim through a one-hot mask).
# Sorting rows run along the last dim: the broadcast layout repeats rows, so ties along dim 0
# would route the gradient by tie order, which torch leaves unspecified. ----
_NOT_0D_OR_EMPTY_REDUCE = ("contiguous", "transposed", "sliced", "offset", "broadcast")
CASES += [
    GradCase("prod", lambda x: x.prod(), lambda x: x.prod()),
    GradCase("prod", lambda x: x.prod(-1, keepdim=True), lambda x: x.prod(-1, keepdim=True), variant="dim"),
    GradCase("prod", lambda x: bm.where(x > 0.3, x, 0.0).prod(-1), lambda x: torch.where(x > 0.3, x, 0.0).prod(-1),
             ((4, 5),), variant="zeros", double_backward=False),
    GradCase("cumsum", lambda x: x.cumsum(-1), lambda x: x.cumsum(-1)),
    GradCase("cumsum", lambda x: bm.cumsum(x, 0), lambda x: torch.cumsum(x, 0), variant="dim0"),
    GradCase("cumprod", lambda x: x.cumprod(-1), lambda x: x.cumprod(-1)),
    GradCase("cumprod", lambda x: bm.where(x > 0.3, x, 0.0).cumprod(-1),
             lambda x: torch.where(x > 0.3, x, 0.0).cumprod(-1), ((4, 6),), variant="zeros", double_backward=False),
    GradCase("std", lambda x: x.std(), lambda x: x.std(), layouts=_NOT_0D_OR_EMPTY_REDUCE),
    GradCase("std", lambda x: bm.std(x, dim=0, correction=0, keepdim=True),
             lambda x: torch.std(x, dim=0, correction=0, keepdim=True), variant="dim",
             layouts=("contiguous", "transposed", "sliced", "offset")),  # broadcast: equal rows, std 0, sqrt' inf
    GradCase("logsumexp", lambda x: bm.logsumexp(x, -1), lambda x: torch.logsumexp(x, -1)),
    GradCase("logsumexp", lambda x: bm.logsumexp(x, (0, 1), keepdim=True),
             lambda x: torch.logsumexp(x, (0, 1), keepdim=True), ((2, 3, 4),), variant="dims", layouts=_NOT_0D),
    GradCase("norm", lambda x: x.norm(), lambda x: x.norm(), layouts=_NOT_EMPTY),
    GradCase("norm", lambda x: bm.norm(x, 3, dim=-1), lambda x: torch.norm(x, 3, dim=-1), variant="p3",
             layouts=_NOT_EMPTY),
    GradCase("norm", lambda x: bm.linalg.vector_norm(x, float("inf"), dim=-1),
             lambda x: torch.linalg.vector_norm(x, float("inf"), dim=-1), variant="inf", layouts=_NOT_EMPTY),
    GradCase("norm", lambda x: bm.linalg.vector_norm(x, 1), lambda x: torch.linalg.vector_norm(x, 1), variant="l1",
             double_backward=False),  # |x|'' is 0 almost everywhere; torch's sgn' graph differs
    GradCase("sort", lambda x: bm.sort(x, -1).values, lambda x: torch.sort(x, -1).values),
    GradCase("sort", lambda x: bm.sort(x, -1, descending=True).values,
             lambda x: torch.sort(x, -1, descending=True).values, variant="descending"),
    GradCase("topk", lambda x: bm.topk(x, 2).values, lambda x: torch.topk(x, 2).values,
             layouts=_NOT_0D_OR_EMPTY_REDUCE),
    GradCase("median", lambda x: bm.median(x, -1).values, lambda x: torch.median(x, -1).values,
             ((3, 5),), layouts=_NOT_0D_OR_EMPTY_REDUCE),
    GradCase("median", lambda x: bm.median(x), lambda x: torch.median(x), ((3, 5),), variant="all",
             layouts=("contiguous", "transposed", "sliced", "offset")),  # broadcast: tied medians over the rows
    GradCase("max_dim", lambda x: bm.max(x, -1).values, lambda x: torch.max(x, -1).values, layouts=_NOT_EMPTY),
    GradCase("max_dim", lambda x: bm.min(x, -1, keepdim=True).values,
             lambda x: torch.min(x, -1, keepdim=True).values, variant="min", layouts=_NOT_EMPTY),
]

# ---- issue 12's elementwise math (csrc/autograd/rules_elementwise.cpp) ----
CASES += [
    _unary("log1p", "pos"),
    _unary("expm1", "small"),
    _unary("log2", "pos"),
    _unary("log10", "pos"),
    _unary("exp2", "small"),
    _unary("erf"),
    # x * 0.3 keeps every domain's values inside erfinv's (-1, 1)
    GradCase("erfinv", lambda x: bm.erfinv(x * 0.3), lambda x: torch.erfinv(x * 0.3), domain="small"),
    _unary("sign"),  # piecewise constant: a zero gradient, as torch
    _unary("floor"),
    _unary("ceil"),
    _unary("round"),
    GradCase("round", lambda x: bm.round(x, decimals=2), lambda x: torch.round(x, decimals=2), variant="decimals"),
    _unary("trunc"),
    _unary("frac"),
    _unary("nan_to_num"),
    _binary("atan2"),
    _binary("atan2", shapes=((3, 4), (4,)), variant="broadcast"),
    _binary("hypot"),
    GradCase("fmod", bm.fmod, torch.fmod, ((3, 4), (3, 4)), domain=("any", "pos"),
             double_backward=False),  # trunc(a / b) is piecewise constant
    GradCase("fmod", lambda x: bm.fmod(x, 1.5), lambda x: torch.fmod(x, 1.5), variant="scalar"),
    GradCase("lerp", bm.lerp, torch.lerp, ((3, 4), (3, 4), (3, 4))),
    GradCase("lerp", lambda s, e: bm.lerp(s, e, 0.3), lambda s, e: torch.lerp(s, e, 0.3), ((3, 4), (4,)),
             variant="scalar_weight"),
    GradCase("div", bm.reciprocal, torch.reciprocal, domain="pos", variant="reciprocal"),
    GradCase("mul", bm.square, torch.square, variant="square"),
]

# ---- the shape functions' rows (flip, gather, scatter, einsum, the views): grad_cases_shape.py ----
from grad_cases_shape import shape_grad_cases  # noqa: E402

CASES += shape_grad_cases()
