"""Gradients through indexing: basic and advanced reads (integer tensors, boolean masks, both mixed
with slices), writes (t[idx] = v, t[mask] = 0) on tensors in a graph, index_select and index_add,
against torch on every device and on strided inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer.testing import assert_close
from harness import DEVICES

VALS = np.arange(24, dtype=np.float32).reshape(4, 6) / 7 - 1.3
IDX = np.array([2, 0, 2, 3])
MASK = VALS > 0.1

READS = [
    ("int", lambda lib, x, i, m: x[1]),
    ("slice_step", lambda lib, x, i, m: x[::2, 1:5:3]),
    ("tensor", lambda lib, x, i, m: x[i]),
    ("tensor_dim1", lambda lib, x, i, m: x[:, i]),
    ("tensor_pair", lambda lib, x, i, m: x[i, i + 1]),
    ("mask", lambda lib, x, i, m: x[m]),
    ("row_mask", lambda lib, x, i, m: x[m[:, 0]]),
    ("ellipsis_none", lambda lib, x, i, m: x[..., None, 2]),
    ("index_select", lambda lib, x, i, m: lib.index_select(x, 1, i)),
    ("index_add", lambda lib, x, i, m: lib.zeros(5, 6, dtype=x.dtype, device=x.device).index_add(0, i, x)),
]


def _x(device, layout):
    if layout == "transposed":
        return bm.tensor(np.ascontiguousarray(VALS.T), device=device).T.requires_grad_()
    if layout == "sliced":
        big = np.zeros((8, 12), np.float32)
        big[::2, ::2] = VALS
        return bm.tensor(big, device=device)[::2, ::2].requires_grad_()
    return bm.tensor(VALS, device=device, requires_grad=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("case", READS, ids=lambda c: c[0])
def test_gradient_of_a_read(case, layout, device):
    _, f = case
    x = _x(device, layout)
    tx = torch.tensor(VALS, requires_grad=True)
    y = f(bm, x, bm.tensor(IDX, device=device), bm.tensor(MASK, device=device))
    yt = f(torch, tx, torch.tensor(IDX), torch.tensor(MASK))
    w = np.random.default_rng(0).standard_normal(tuple(yt.shape)).astype(np.float32)
    (y * bm.tensor(w, device=device)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    assert_close(x.grad, tx.grad.numpy(), 1e-6, 1e-6)


WRITES = [
    ("mask_zero", lambda lib, h, v, i, m: h.__setitem__(m, 0)),
    ("tensor_value", lambda lib, h, v, i, m: h.__setitem__(i[:2] + 1, v)),
    ("slice_value_broadcast", lambda lib, h, v, i, m: h.__setitem__((slice(1, 3), slice(0, 6)), v[0])),
    ("mask_value", lambda lib, h, v, i, m: h.__setitem__(m[:, :1].expand(4, 6) * m, v.reshape(-1)[:int(
        (MASK[:, :1] & MASK).sum())])),
    ("inplace_view", lambda lib, h, v, i, m: h[1:3].mul_(v)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", WRITES, ids=lambda c: c[0])
def test_gradient_through_a_write(case, device):
    _, f = case
    vv = np.random.default_rng(1).standard_normal((2, 6)).astype(np.float32)

    def run(lib, mk):
        x, v = mk(VALS), mk(vv)
        h = x * 2
        f(lib, h, v, lib.tensor(IDX) if lib is torch else bm.tensor(IDX, device=device),
          lib.tensor(MASK) if lib is torch else bm.tensor(MASK, device=device))
        (h * h).sum().backward()
        return x.grad, v.grad

    ours = run(bm, lambda a: bm.tensor(a, device=device, requires_grad=True))
    ref = run(torch, lambda a: torch.tensor(a, requires_grad=True))
    for o, r in zip(ours, ref):
        if r is None:
            assert o is None or not np.any(o.numpy())
        else:
            assert_close(o, r.numpy(), 1e-5, 1e-6)


def test_writing_into_a_leaf_that_requires_grad_is_an_error():
    x = bm.tensor(VALS, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"\[index_put_\] a leaf tensor that requires grad"):
        x[0] = 1.0
    with bm.no_grad():
        x[0] = 1.0
    assert_close(x[0], np.ones(6))
