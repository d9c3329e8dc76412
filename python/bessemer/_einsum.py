"""torch.einsum: plans on the labels (never on elements) and lowers to diagonal views, sums,
permutes, reshapes and batched matmul, contracting the operands left to right."""

from __future__ import annotations

import builtins

from . import _core
from ._core import Tensor

_int = builtins.int
_bool = builtins.bool


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
