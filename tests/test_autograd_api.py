"""Autograd's API and guarantees with torch's meanings: leaves and .grad, grad_fn names, grad mode
(per thread), backward/grad options, in-place ops and their version checks, clear errors, graphs
freed. Values are checked against torch on CPU."""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer.testing import assert_close
from harness import DEVICES


def leaf(values, device="cpu", dtype=bm.float32):
    return bm.tensor(np.asarray(values, dtype=np.float32), dtype=dtype, device=device).requires_grad_()


@pytest.mark.parametrize("device", DEVICES)
def test_leaf_grad_accumulates_and_grad_fn_names(device):
    x = leaf([1.0, 2.0, 3.0], device)
    assert x.is_leaf and x.requires_grad and x.grad is None and x.grad_fn is None
    y = (x * x + x).sum()
    assert not y.is_leaf and y.requires_grad
    assert y.grad_fn.name() == "SumBackward1"
    assert y.grad_fn.next_functions[0][0].name() == "AddBackward0"
    y.backward()
    assert_close(x.grad, np.array([3.0, 5.0, 7.0]))
    (x * 2).sum().backward()
    assert_close(x.grad, np.array([5.0, 7.0, 9.0]))  # accumulates, as torch
    assert x.grad.device == x.device


def test_factories_take_requires_grad():
    for t in (bm.zeros(2, requires_grad=True), bm.ones(2, 3, requires_grad=True),
              bm.full((2,), 1.5, requires_grad=True),
              bm.tensor([1.0], requires_grad=True), bm.rand(3, requires_grad=True), bm.randn(2, requires_grad=True),
              bm.arange(3.0, requires_grad=True), bm.empty(2, requires_grad=True)):
        assert t.requires_grad and t.is_leaf


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match=r"\[requires_grad_\] only tensors of floating point"):
        bm.arange(3).requires_grad_()
    assert not bm.arange(3).requires_grad


def test_non_differentiable_outputs():
    x = leaf([1.0, 3.0, 2.0])
    for r in (x > 1, x.argmax(), x == x, bm.argmin(x)):
        assert not r.requires_grad and r.grad_fn is None
    v, i = bm.max(x, dim=0)
    assert v.requires_grad and not i.requires_grad


def test_no_grad_enable_grad_set_grad_enabled():
    x = leaf([1.0, 2.0])
    with bm.no_grad():
        assert not bm.is_grad_enabled()
        y = x * 2
        with bm.enable_grad():
            z = x * 2
    assert not y.requires_grad and z.requires_grad and bm.is_grad_enabled()

    @bm.no_grad()
    def f(t):
        return t * 3

    assert not f(x).requires_grad
    bm.set_grad_enabled(False)
    assert not (x * 2).requires_grad
    bm.set_grad_enabled(True)
    with bm.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad


def test_grad_mode_is_per_thread():
    seen = {}

    def worker():
        seen["enabled"] = bm.is_grad_enabled()
        x = leaf([1.0])
        seen["records"] = (x * 2).requires_grad

    with bm.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen == {"enabled": True, "records": True}


def test_backward_errors():
    x = leaf([1.0, 2.0])
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    with pytest.raises(ValueError, match=r"mismatch in shape"):
        y.backward(bm.ones(3))
    with pytest.raises(RuntimeError, match="does not require grad"):
        bm.ones(2).sum().backward()
    s = (x.exp()).sum()
    s.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        s.backward()
    s2 = (x.exp()).sum()
    s2.backward(retain_graph=True)
    s2.backward()
    assert_close(x.grad, 3 * np.exp([1.0, 2.0]), 1e-6, 1e-6)  # once from s, twice from s2


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_of_wrong_device_is_an_error(device):
    x = leaf([1.0, 2.0], device)
    other = "cpu" if device != "cpu" else "metal-sim"
    with pytest.raises(bm.DeviceMismatchError, match=r"\[backward\]"):
        (x * 2).backward(bm.ones(2, device=other))


def test_autograd_grad_and_allow_unused():
    x, w, u = leaf([1.0, 2.0]), leaf([3.0, 4.0]), leaf([5.0])
    y = (x * w).sum()
    gx, gw = bm.autograd.grad(y, [x, w], retain_graph=True)
    assert_close(gx, np.array([3.0, 4.0]))
    assert_close(gw, np.array([1.0, 2.0]))
    assert x.grad is None and w.grad is None  # grad() does not accumulate
    with pytest.raises(RuntimeError, match="allow_unused"):
        bm.autograd.grad(y, [x, u], retain_graph=True)
    gx, gu = bm.autograd.grad(y, [x, u], allow_unused=True)
    assert gu is None


def test_retain_grad_and_detach():
    x = leaf([1.0, 2.0])
    h = x * 3
    h.retain_grad()
    (h * h).sum().backward()
    assert_close(h.grad, np.array([6.0, 12.0]))
    d = h.detach()
    assert not d.requires_grad and d.grad_fn is None
    assert d._data_ptr() == h._data_ptr()


def test_hessian_vector_product_of_an_mlp_matches_torch():
    rng = np.random.default_rng(0)
    w1, w2, xin = rng.standard_normal((4, 3)), rng.standard_normal((2, 4)), rng.standard_normal((5, 3))
    v1, v2 = rng.standard_normal((4, 3)), rng.standard_normal((2, 4))

    def run(lib, t):
        a, b = t(w1), t(w2)
        x = lib.tensor(xin.astype(np.float32)) if lib is bm else torch.tensor(xin.astype(np.float32))
        loss = (lib.tanh(x @ a.T) @ b.T).pow(2).sum()
        ga, gb = lib.autograd.grad(loss, [a, b], create_graph=True)
        dot = (ga * t(v1, False)).sum() + (gb * t(v2, False)).sum()
        return lib.autograd.grad(dot, [a, b])

    ours = run(bm, lambda w, rg=True: bm.tensor(w.astype(np.float32), requires_grad=rg))
    ref = run(torch, lambda w, rg=True: torch.tensor(w.astype(np.float32), requires_grad=rg))
    for o, r in zip(ours, ref):
        assert_close(o, r.numpy(), 1e-4, 1e-4)


def test_gradcheck_float64():
    x = bm.tensor(np.random.default_rng(1).standard_normal((3, 2)), dtype=bm.float64, requires_grad=True)
    w = bm.tensor(np.random.default_rng(2).standard_normal((2, 4)), dtype=bm.float64, requires_grad=True)
    assert bm.autograd.gradcheck(lambda a, b: (a @ b).tanh().softmax(-1), (x, w))
    assert bm.autograd.gradgradcheck(lambda a, b: (a @ b).sigmoid().sum(0), (x, w))


# ---- in-place ops ----


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_ops_values_and_version(device):
    a = bm.tensor([1.0, -2.0, 3.0], device=device)
    v0 = a._version
    a.add_(1).mul_(2).sub_(bm.tensor([1.0, 1.0, 1.0], device=device), alpha=2).div_(2)
    assert_close(a, np.array([1.0, -2.0, 3.0]))
    a += 1
    a -= 2
    a *= 3
    a /= 3
    a.clamp_(-1.5, 1.5)
    assert_close(a, np.array([0.0, -1.5, 1.5]))
    a.fill_(2.0)
    a.zero_()
    a.copy_(bm.tensor([7.0], device=device))
    assert_close(a, np.array([7.0, 7.0, 7.0]))
    assert a._version > v0


def test_inplace_dtype_and_shape_errors():
    i = bm.arange(3)
    with pytest.raises(TypeError, match=r"\[add_\] result type float32 can't be cast"):
        i.add_(0.5)
    with pytest.raises(ValueError, match=r"\[mul_\] output with shape"):
        bm.ones(3).mul_(bm.ones(2, 3))
    h = bm.ones(2, dtype=bm.float16)
    h += bm.ones(2)  # float32 into float16: allowed, as torch
    assert h.dtype == bm.float16


def test_inplace_on_leaf_requiring_grad_is_an_error_outside_no_grad():
    p = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"\[add_\] a leaf tensor that requires grad"):
        p.add_(1)
    with pytest.raises(RuntimeError, match=r"\[mul_\] a view of a leaf tensor"):
        p[0:1].mul_(2)
    assert_close(p, np.array([1.0, 2.0]))  # untouched
    with bm.no_grad():
        p.add_(1)
    assert_close(p, np.array([2.0, 3.0]))
    assert p.is_leaf and p.requires_grad


def test_saved_tensor_modified_in_place_is_an_error_naming_the_op():
    x = leaf([1.0, 2.0])
    y = x.exp()
    z = (y * 2).sum()
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an in-place operation.*MulBackward0"):
        z.backward()


@pytest.mark.parametrize("device", DEVICES)
def test_inplace_gradients_match_torch(device):
    def run(lib, mk):
        x = mk([1.0, -2.0, 3.0, 0.5])
        w = mk([0.5, 1.5, -1.0, 2.0])
        h = x * 2
        h.mul_(w)          # base rewritten
        h[1:3].add_(w[:2])  # a view: CopySlices on the base
        h.clamp_(-2.5, 5.0)
        h -= 1
        loss = (h * h).sum()
        loss.backward()
        return x.grad, w.grad

    ours = run(bm, lambda v: bm.tensor(v, device=device, requires_grad=True))
    ref = run(torch, lambda v: torch.tensor(v, requires_grad=True))
    for o, r in zip(ours, ref):
        assert_close(o, r.numpy(), 1e-5, 1e-6)


def test_copy_into_a_tensor_without_grad_makes_it_part_of_the_graph():
    def run(lib, mk):
        y = mk([1.0, 2.0])
        out = lib.zeros(2, 2)
        out[0].copy_(y * 3)
        out[1, 1:].copy_(y[:1])
        (out * out).sum().backward()
        return y.grad

    ours = run(bm, lambda v: bm.tensor(v, requires_grad=True))
    ref = run(torch, lambda v: torch.tensor(v, requires_grad=True))
    assert_close(ours, ref.numpy())


# ---- modules and memory ----


def test_parameter_module_zero_grad_requires_grad():
    lin = bm.nn.Linear(3, 2)
    assert all(p.requires_grad and p.is_leaf for p in lin.parameters())
    lin(bm.ones(4, 3)).sum().backward()
    assert lin.weight.grad is not None
    lin.zero_grad(set_to_none=False)
    assert_close(lin.weight.grad, np.zeros((2, 3)))
    lin.zero_grad()
    assert lin.weight.grad is None
    lin.requires_grad_(False)
    assert not any(p.requires_grad for p in lin.parameters())


def test_backward_frees_the_graph_and_saved_tensors():
    x = leaf(np.ones(1000))
    y = x.exp()
    ref = weakref.ref(y.grad_fn)
    loss = (y * y).sum()
    del y
    loss.backward()
    del loss
    gc.collect()
    assert ref() is None  # no reference cycle keeps the graph alive


def test_a_graph_without_backward_is_freed_too():
    x = leaf(np.ones(10))
    y = (x.exp() * 2).sum()
    ref = weakref.ref(y.grad_fn)
    del y
    assert ref() is None  # freed by reference counting alone, no gc needed


@pytest.mark.parametrize("device", DEVICES)
def test_ties_and_bounds_follow_torch(device):
    vals = [[1.0, 3.0, 3.0, 0.0], [-1.0, 2.0, 2.0, 2.0]]
    other = [[1.0, 2.0, 3.0, 0.0], [0.0, 2.0, 1.0, 5.0]]
    exprs = [
        lambda lib, x, y: lib.max(x, dim=1)[0].sum() + lib.min(x, dim=0)[0].sum(),  # the chosen index only
        lambda lib, x, y: x.amax(dim=1).sum() + x.amin().sum() + x.max() + x.min(),  # split between ties
        lambda lib, x, y: (lib.maximum(x, y) * 3 + lib.minimum(x, y)).sum(),        # half each at a tie
        lambda lib, x, y: (lib.clamp(x, 0.0, 2.0) + lib.relu(x - 3.0) + lib.relu(y)).sum(),  # bounds count as inside
        lambda lib, x, y: (x.abs() + (x - 1.0).abs() + lib.where(x > y, x, y)).sum(),
    ]
    for k, f in enumerate(exprs):
        x, y = (bm.tensor(v, device=device, requires_grad=True) for v in (vals, other))
        tx, ty = (torch.tensor(v, requires_grad=True) for v in (vals, other))
        f(bm, x, y).backward()
        f(torch, tx, ty).backward()
        assert_close(x.grad, tx.grad.numpy(), msg=f"expression {k}")
        if ty.grad is not None:
            assert_close(y.grad, ty.grad.numpy(), msg=f"expression {k}")


def test_gradient_flows_back_to_the_source_device():
    for other in [d for d in DEVICES if d != "cpu"]:
        x = leaf([1.0, 2.0, 3.0])
        y = (x.to(other) * bm.tensor([2.0, 3.0, 4.0], device=other)).sum()
        assert y.device == bm.device(other)
        y.backward()
        assert x.grad.device == bm.device("cpu")
        assert_close(x.grad, np.array([2.0, 3.0, 4.0]))
