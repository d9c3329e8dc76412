"""float64 gradcheck (central finite differences) on the CPU for every gradient rule: the registry
rows of grad_cases.py and the nn ops with backward kernels of their own."""

from __future__ import annotations

import numpy as np
import pytest

import bessemer as bm
import bessemer.nn.functional as F
from grad_cases import CASES

# floor_divide is piecewise constant; the cast row rounds through float32, below the differences' step.
_SKIP = {"floor_divide", "copy[cast]"}


def _inputs(case, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    doms = case.domain if isinstance(case.domain, tuple) else (case.domain,) * len(case.shapes)
    for shape, dom in zip(case.shapes, doms):
        if dom == "pos":
            v = rng.uniform(0.5, 2.0, shape)
        elif dom == "small":
            v = rng.uniform(-1.5, 1.5, shape)
        else:
            v = rng.standard_normal(shape)
        out.append(bm.tensor(v, dtype=bm.float64, requires_grad=True))
    return out


@pytest.mark.parametrize("case", [c for c in CASES if c.op not in _SKIP and c.id not in _SKIP], ids=lambda c: c.id)
def test_gradcheck_registry_rules(case):
    assert bm.autograd.gradcheck(case.ours, tuple(_inputs(case)), eps=1e-6, atol=1e-6, rtol=1e-4)


def _t(rng, *shape, pos=False):
    v = rng.uniform(0.5, 2.0, shape) if pos else rng.standard_normal(shape)
    return bm.tensor(v, dtype=bm.float64, requires_grad=True)


NN = [
    ("conv2d", lambda r: (_t(r, 1, 2, 5, 4), _t(r, 3, 2, 3, 3), _t(r, 3)),
     lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1)),
    ("conv2d_groups_dilation", lambda r: (_t(r, 1, 4, 6, 6), _t(r, 2, 2, 2, 2)),
     lambda x, w: F.conv2d(x, w, padding="same", dilation=2, groups=2)),
    ("max_pool2d", lambda r: (_t(r, 1, 2, 5, 5),), lambda x: F.max_pool2d(x, 3, 2, 1)),
    ("avg_pool2d", lambda r: (_t(r, 1, 2, 5, 4),), lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True)),
    ("adaptive_avg_pool2d", lambda r: (_t(r, 1, 2, 5, 4),), lambda x: F.adaptive_avg_pool2d(x, (2, 3))),
    ("batch_norm_train", lambda r: (_t(r, 3, 2, 2, 2), _t(r, 2), _t(r, 2)),
     lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True)),
    ("batch_norm_eval", lambda r: (_t(r, 3, 2, 2), _t(r, 2), _t(r, 2)),
     lambda x, w, b: F.batch_norm(x, bm.tensor([0.1, -0.2], dtype=bm.float64), bm.tensor([1.5, 0.5], dtype=bm.float64),
                                  w, b, training=False)),
    ("layer_norm", lambda r: (_t(r, 2, 3, 4), _t(r, 3, 4), _t(r, 3, 4)),
     lambda x, w, b: F.layer_norm(x, (3, 4), w, b)),
    ("embedding", lambda r: (_t(r, 5, 3),), lambda w: F.embedding(bm.tensor([[0, 2, 2], [4, 1, 0]]), w)),
    ("nll_loss", lambda r: (_t(r, 4, 5),),
     lambda x: F.nll_loss(x, bm.tensor([1, 4, 0, 4]), bm.tensor([1.0, 2.0, 0.5, 1.0, 3.0], dtype=bm.float64),
                          ignore_index=0)),
    ("cross_entropy_smoothing", lambda r: (_t(r, 4, 5),),
     lambda x: F.cross_entropy(x, bm.tensor([1, 4, 0, 2]), label_smoothing=0.1)),
    ("linear", lambda r: (_t(r, 3, 4), _t(r, 2, 4), _t(r, 2)), F.linear),
    ("index", lambda r: (_t(r, 4, 3),), lambda x: x[bm.tensor([2, 0, 2])][:, 1:] * x[x.detach() > 0].sum()),
    ("setitem", lambda r: (_t(r, 4, 3), _t(r, 2, 3)), lambda x, v: _setitem(x, v)),
]


def _setitem(x, v):
    h = x * 1.5
    h[bm.tensor([3, 1])] = v * v
    h[0, 1:] *= 2.0
    return h


@pytest.mark.parametrize("case", NN, ids=lambda c: c[0])
def test_gradcheck_nn_rules(case):
    _, make, fn = case
    assert bm.autograd.gradcheck(fn, make(np.random.default_rng(0)), eps=1e-6, atol=1e-6, rtol=1e-4)
