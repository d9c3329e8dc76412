"""The one-input in-place ops (relu_ sigmoid_ exp_ ... and clamp_; F.relu and F.silu with
inplace=True, nn.ReLU(inplace=True)) against torch's in-place ops on CPU, on every device and layout:
the values, the tensor returned (self), the elements a view does not cover, the memory they do not
allocate without a graph, autograd through them, and their errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import bessemer as bm
import bessemer.nn.functional as F
from bessemer import nn
from harness import DEVICES

# (method, domain of its inputs)
OPS = [("relu_", "any"), ("neg_", "any"), ("abs_", "any"), ("exp_", "any"), ("log_", "positive"),
       ("sqrt_", "positive"), ("rsqrt_", "positive"), ("sin_", "any"), ("cos_", "any"), ("tanh_", "any"),
       ("sigmoid_", "any")]
LAYOUTS = ["contiguous", "transposed", "sliced", "offset", "0d"]


def _values(shape, domain, rng):
    v = rng.standard_normal(shape).astype(np.float32)
    return np.abs(v) + 0.1 if domain == "positive" else v


def _case(layout, domain, device, seed=0):
    """(bessemer view, its base, torch view, torch base) over the same values and the same layout."""
    rng = np.random.default_rng(seed)
    base = _values((7, 9), domain, rng)
    pick = {"contiguous": lambda t: t, "transposed": lambda t: t.T, "sliced": lambda t: t[1::2, ::3],
            "offset": lambda t: t.reshape(-1)[5:50].reshape(5, 9), "0d": lambda t: t[2, 3]}[layout]
    b, tb = bm.tensor(base, device=device), torch.from_numpy(base.copy())
    return pick(b), b, pick(tb), tb


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op,domain", OPS, ids=[o for o, _ in OPS])
def test_inplace_unary_matches_torch(op, domain, layout, device):
    x, base, tx, tbase = _case(layout, domain, device)
    r = getattr(x, op)()
    getattr(tx, op)()
    assert r is x
    # the view's elements changed as torch's, and the base's other elements kept their values
    np.testing.assert_allclose(base.numpy(), tbase.numpy(), rtol=3e-6, atol=1e-7)
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=3e-6, atol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_clamp_inplace_matches_torch(layout, device):
    for lo, hi in [(-0.5, 0.7), (None, 0.2), (-0.1, None)]:
        x, base, tx, tbase = _case(layout, "any", device)
        assert x.clamp_(lo, hi) is x
        tx.clamp_(lo, hi)
        np.testing.assert_array_equal(base.numpy(), tbase.numpy())


def test_inplace_relu_of_integers_and_refused_float_results():
    i = bm.tensor(np.array([-3, 0, 5], np.int64))
    i.relu_()
    np.testing.assert_array_equal(i.numpy(), [0, 0, 5])
    with pytest.raises(TypeError, match=r"\[sigmoid_\] result type float32 can't be cast .* int64"):
        i.sigmoid_()
    with pytest.raises(TypeError, match=r"\[clamp_\] result type float32"):
        i.clamp_(min=0.5)
    np.testing.assert_array_equal(i.numpy(), [0, 0, 5])  # untouched by the refused calls


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_unary_refuses_overlapping_views(device):
    x = bm.tensor(np.array([-1.0, 2.0, -3.0], np.float32), device=device).expand(4, 3)
    with pytest.raises(Exception, match=r"\[relu_\]"):
        x.relu_()


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_without_graph_allocates_nothing(device):
    x = bm.tensor(np.random.default_rng(1).standard_normal((256, 1024)).astype(np.float32), device=device)
    for call in (lambda: x.relu_(), lambda: x.sigmoid_(), lambda: x.clamp_(-0.5, 0.5),
                 lambda: F.relu(x, inplace=True), lambda: F.silu(x, inplace=True)):
        bm.synchronize(device)
        before = bm.memory_stats(device)["allocated_bytes.current"]
        bm.reset_peak_memory_stats(device)
        call()
        bm.synchronize(device)
        assert bm.memory_stats(device)["allocated_bytes.peak"] - before < x.numel() * 4 // 2


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["relu_", "sigmoid_", "tanh_", "exp_"])
def test_inplace_unary_autograd_matches_torch(op, device):
    a = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    x = bm.tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    y, ty = x * 1.5, tx * 1.5
    getattr(y[:, 1:], op)()  # a view of a non-leaf: CopySlices
    getattr(ty[:, 1:], op)()
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match=rf"\[{op}\] a leaf tensor that requires grad"):
        getattr(x, op)()


@pytest.mark.parametrize("device", DEVICES)
def test_relu_and_silu_inplace_modules(device):
    a = np.random.default_rng(3).standard_normal((2, 3, 4, 5)).astype(np.float32)
    for ours, theirs in [(nn.ReLU(inplace=True), torch.nn.ReLU(inplace=True)),
                         (nn.SiLU(inplace=True), torch.nn.SiLU(inplace=True))]:
        x, tx = bm.tensor(a, device=device), torch.from_numpy(a.copy())
        assert ours(x) is x
        theirs(tx)
        np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-6, atol=1e-7)
        assert repr(ours).endswith("(inplace=True)")
    x = bm.tensor(a, device=device)
    y = nn.ReLU()(x)
    assert y is not x and np.array_equal(x.numpy(), a)  # the default leaves its input alone
    y = bm.relu_(x)
    assert y is x and np.array_equal(x.numpy(), np.maximum(a, 0))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["relu_", "sigmoid_", "exp_", "neg_", "sin_", "log_"])
def test_inplace_unary_on_a_non_leaf_base(op, device):
    # relu_ sigmoid_ exp_ neg_ (rules that need no input) write in place and save self as their
    # output; sin_ log_ keep a copy of the old value for their rule.
    a = np.abs(np.random.default_rng(4).standard_normal((3, 4))).astype(np.float32) + 0.2
    x = bm.tensor(a, device=device, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    y, ty = x * 1.5, tx * 1.5
    assert getattr(y, op)() is y
    getattr(ty, op)()
    assert y.grad_fn.name() == ty.grad_fn.name()
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_output_saved_then_written_again_is_refused(device):
    x = bm.tensor(np.ones((2, 3), np.float32), device=device, requires_grad=True)
    y = x * 2
    y.sigmoid_()  # SigmoidBackward0 saves y as its output
    y.mul_(3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation|version"):
        y.sum().backward()
