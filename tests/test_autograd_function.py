"""bessemer.autograd.Function: the same custom function written for bessemer and for torch, on every
device and input layout, gives the same values and gradients; its errors name the function."""

import numpy as np
import pytest
import torch

import bessemer as bm
from harness import DEVICES


def _exp_fn(lib):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    return Exp


def _scaled_mul_fn(lib, calls=None):
    """x * w * alpha with a non-tensor argument; backward in differentiable ops (double backward)."""

    class ScaledMul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, alpha):
            ctx.save_for_backward(x, w)
            ctx.alpha = alpha
            if calls is not None:
                calls.append(tuple(ctx.needs_input_grad))
            return x * w * alpha

        @staticmethod
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            gx = grad * w * ctx.alpha if ctx.needs_input_grad[0] else None
            gw = grad * x * ctx.alpha if ctx.needs_input_grad[1] else None
            return gx, gw, None

    return ScaledMul


# Each view is taken of a leaf that requires grad, so the function gets a strided, non-leaf input
# and the gradient flows back through the view to the leaf.
VIEWS = {
    "contiguous": ((3, 4), lambda t: t),
    "transposed": ((4, 3), lambda t: t.transpose(0, 1)),
    "sliced": ((7, 9), lambda t: t[1::2, ::2]),
    "offset": ((17,), lambda t: t[5:].reshape(3, 4)),
    "broadcast": ((1, 4), lambda t: t.expand(3, 4)),
    "0d": ((), lambda t: t),
}


@pytest.mark.parametrize("layout", sorted(VIEWS))
@pytest.mark.parametrize("device", DEVICES)
def test_custom_function_matches_torch_on_every_layout(device, layout):
    shape, view = VIEWS[layout]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(np.asarray(view(torch.tensor(x))).shape).astype(np.float32)
    g = rng.standard_normal(w.shape).astype(np.float32)
    out = {}
    for lib, make in (("bm", lambda a: bm.tensor(a, device=device)), ("torch", torch.tensor)):
        mod = bm if lib == "bm" else torch
        xt, wt = make(x).requires_grad_(), make(w).requires_grad_()
        y = _exp_fn(mod).apply(_scaled_mul_fn(mod).apply(view(xt), wt, 0.5))
        y.backward(make(g))
        out[lib] = [np.asarray(v.detach().cpu().numpy() if lib == "torch" else v.detach().numpy())
                    for v in (y, xt.grad, wt.grad)]
    for ours, theirs in zip(out["bm"], out["torch"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_needs_input_grad_and_none_gradients(device):
    calls = []
    fn = _scaled_mul_fn(bm, calls)
    x = bm.tensor([1.0, 2.0], device=device, requires_grad=True)
    w = bm.tensor([3.0, 4.0], device=device)  # no gradient wanted
    y = fn.apply(x, w, 2.0)
    assert calls == [(True, False, False)] and y.grad_fn.name() == "ScaledMulBackward"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 8.0])
    assert w.grad is None


def test_no_graph_without_grad_mode_or_inputs_that_require_grad():
    fn = _exp_fn(bm)
    x = bm.tensor([0.0, 1.0], requires_grad=True)
    with bm.no_grad():
        y = fn.apply(x)
    assert y.grad_fn is None and not y.requires_grad
    z = fn.apply(bm.tensor([0.0, 1.0]))
    assert z.grad_fn is None
    np.testing.assert_allclose(z.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)


def test_gradcheck_and_double_backward():
    x = bm.tensor(np.random.default_rng(1).standard_normal((3, 2)), dtype=bm.float64, requires_grad=True)
    w = bm.tensor(np.random.default_rng(2).standard_normal((3, 2)), dtype=bm.float64, requires_grad=True)
    fn = _scaled_mul_fn(bm)
    assert bm.autograd.gradcheck(lambda a, b: fn.apply(a, b, 1.5), (x, w))
    assert bm.autograd.gradgradcheck(lambda a, b: fn.apply(a, b, 1.5), (x, w))
    # d/dx of sum(d(x*w*1.5)/dw) = 1.5, through the backward's own graph (create_graph)
    (gw,) = bm.autograd.grad(fn.apply(x, w, 1.5).sum(), [w], create_graph=True)
    (gx,) = bm.autograd.grad(gw.sum(), [x])
    np.testing.assert_allclose(gx.numpy(), np.full((3, 2), 1.5))


def test_forward_returning_its_input_leaves_the_input_alone():
    class Identity(bm.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = bm.tensor([1.0, 2.0], requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and x.grad_fn is None
    (y * y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0])  # 2 * (2 * x): the custom rule, not identity's


def test_retain_graph_and_second_backward():
    x = bm.tensor([0.5], requires_grad=True)
    y = _exp_fn(bm).apply(x)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([0.5]), rtol=1e-6)
    with pytest.raises(RuntimeError, match=r"\[ExpBackward\] trying to backward through the graph a second time"):
        y.backward()


def _bad(kind):
    class Bad(bm.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            if kind == "tuple":
                return x * 2, x * 3
            if kind == "int":
                return (x > 0).to(bm.int32)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            if kind == "count":
                return grad
            if kind == "type":
                return 1.0, None
            if kind == "shape":
                return grad.sum(), None
            if kind == "nontensor":
                return grad, grad
            if kind == "raise":
                raise KeyError("from backward")
            (x,) = ctx.saved_tensors
            return grad * x, None

    return Bad


@pytest.mark.parametrize("kind,exc,message", [
    ("count", RuntimeError, r"\[BadBackward\] backward returned 1 gradient\(s\), but forward took 2 argument"),
    ("type", TypeError, r"\[BadBackward\] backward returned float as the gradient of argument 0"),
    ("shape", ValueError, r"BadBackward produced a gradient of shape \(\) for a tensor of shape \(3,\)"),
    ("nontensor", RuntimeError, r"\[BadBackward\] backward returned a gradient for argument 1, which is not a tensor"),
    ("raise", KeyError, r"from backward"),
])
def test_bad_backward_raises_naming_the_function(kind, exc, message):
    x = bm.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = _bad(kind).apply(x, 7)
    with pytest.raises(exc, match=message):
        y.sum().backward()
    assert x.grad is None  # nothing was accumulated
    z = bm.tensor([1.0, 2.0, 3.0], requires_grad=True)  # and the engine still works
    (z * z).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), [2.0, 4.0, 6.0])


def test_bad_forward_raises_naming_the_function():
    x = bm.tensor([1.0, -2.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"\[BadBackward\] forward must return one tensor .* it returned tuple"):
        _bad("tuple").apply(x, 0)
    with pytest.raises(TypeError, match=r"\[BadBackward\] only a floating point output can have a gradient"):
        _bad("int").apply(x, 0)


def test_saved_tensor_modified_in_place_is_an_error():
    x = bm.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1  # a non-leaf the function saves
    y = _bad("ok").apply(a, 0)
    a.add_(1)
    with pytest.raises(RuntimeError, match=r"\[BadBackward\] saved tensor 0 .* modified by an in-place operation"):
        y.sum().backward()


def test_memory_stays_flat_with_and_without_backward():
    fn = _scaled_mul_fn(bm)
    w = bm.ones(64, requires_grad=True)
    counts = []
    for step in range(300):
        x = bm.randn(64, requires_grad=True)
        y = _exp_fn(bm).apply(fn.apply(x, w, 0.1))
        if step % 2:
            y.sum().backward()
        del x, y  # the graph of an even step is dropped without a backward
        if step in (20, 299):
            counts.append(bm._core._live_storages())
    assert counts[1] <= counts[0], f"live storages grew from {counts[0]} to {counts[1]}"
