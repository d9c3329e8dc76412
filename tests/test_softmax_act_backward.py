"""softmax / log_softmax / gelu / gelu_tanh / silu backward kernels (_core._*_backward) against
torch autograd in float64, on every device, float dtype and layout; and cpu vs metal-sim agreement
(bit for bit for the activations, whose float32 formulas are shared with the shaders)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from backward_helpers import (
    LAYOUTS,
    assert_grad_close,
    broadcast_grad,
    dtype_device_params,
    leaf,
    np64,
    place,
    randn,
    rounded,
)

import bessemer as bm
from bessemer import _core
from harness import DEVICES

SIM = "metal-sim"  # always built: the shaders run on the CPU
SOFTMAX = {"softmax": (_core._softmax_backward, torch.softmax),
           "log_softmax": (_core._log_softmax_backward, torch.log_softmax)}


def softmax_case(kind, shape, dim, dtype, seed=0):
    """(grad values, forward output values rounded to dtype, float64 reference gradient).

    The reference is torch's own float64 backward on exactly the rounded output the kernel sees."""
    x = randn(shape, bm.float64, seed, scale=2.0)
    y = rounded(SOFTMAX[kind][1](torch.tensor(x), dim).numpy(), dtype)
    g = randn(shape, dtype, seed + 1)
    fn = torch._softmax_backward_data if kind == "softmax" else torch._log_softmax_backward_data
    ref = fn(torch.tensor(g), torch.tensor(y), dim, torch.float64)
    return g, y, ref


@pytest.mark.parametrize("device,dtype", dtype_device_params())
@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((3, 4, 5), -1), ((3, 4, 5), 1), ((3, 4, 5), 0), ((2, 70), 1), ((40, 6), 0)],
                         ids=["last", "middle", "first", "long_row", "long_column"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_softmax_backward_matches_torch(device, dtype, kind, shape, dim, layout):
    g, y, ref = softmax_case(kind, shape, dim, dtype)
    # grad and output in different layouts: the output contiguous when the grad is not, and vice versa
    other = "contiguous" if layout != "contiguous" else "transposed"
    out = SOFTMAX[kind][0](place(g, dtype, device, layout), place(y, dtype, device, other), dim)
    assert str(out.device) == device
    assert_grad_close(out, ref, dtype, f"{kind} dim={dim} {layout}")


@pytest.mark.parametrize("device,dtype", dtype_device_params())
@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
@pytest.mark.parametrize("bkind", ["scalar", "row"])
def test_softmax_backward_zero_stride_grad(device, dtype, kind, bkind):
    """The grad of a sum (one value expanded everywhere) or of a broadcast add."""
    shape, dim = (3, 4, 6), 1
    gt, g = broadcast_grad(shape, dtype, device, 3, bkind)
    _, y, _ = softmax_case(kind, shape, dim, dtype)
    fn = torch._softmax_backward_data if kind == "softmax" else torch._log_softmax_backward_data
    ref = fn(torch.tensor(np.ascontiguousarray(g)), torch.tensor(y), dim, torch.float64)
    assert_grad_close(SOFTMAX[kind][0](gt, place(y, dtype, device), dim), ref, dtype, kind)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
def test_softmax_backward_full_autograd_chain(device, kind):
    """x -> softmax -> backward in torch float64 vs our forward then our backward, in float32."""
    x = randn((4, 7), bm.float32, 5, scale=3.0)
    g = randn((4, 7), bm.float32, 6)
    tx = leaf(x)
    SOFTMAX[kind][1](tx, 0).backward(torch.tensor(g))
    xb = place(x, bm.float32, device)
    y = bm.softmax(xb, 0) if kind == "softmax" else bm.log_softmax(xb, 0)
    assert_grad_close(SOFTMAX[kind][0](place(g, bm.float32, device), y, 0), tx.grad, bm.float32, kind)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
def test_softmax_backward_0d_and_empty(device, kind):
    g, y = bm.tensor(1.5, device=device), bm.tensor(0.0 if kind == "log_softmax" else 1.0, device=device)
    for dim in (0, -1):
        out = SOFTMAX[kind][0](g, y, dim)
        assert out.shape == () and out.item() == 0.0
    e = bm.zeros(0, 3, device=device)
    assert SOFTMAX[kind][0](e, e, 1).shape == (0, 3)


@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [bm.float32, bm.float16, bm.bfloat16])
@pytest.mark.parametrize("shape,dim", [((3, 5), 1), ((2, 70), 1), ((40, 6), 0), ((40, 1100), 0)],
                         ids=["short", "group", "group_column", "thread_column"])
def test_softmax_backward_cpu_and_simulator_agree(kind, dtype, shape, dim):
    g, y, _ = softmax_case(kind, shape, dim, dtype, seed=11)
    res = [np64(SOFTMAX[kind][0](place(g, dtype, d), place(y, dtype, d), dim)) for d in ("cpu", SIM)]
    # Only the order of one sum per row differs: an ulp or two of that sum (an absolute error near
    # the grads' scale, 1, where out cancels), one rounding of a half type.
    tol = {bm.float32: 1e-6, bm.float16: 1e-3, bm.bfloat16: 8e-3}[dtype]
    np.testing.assert_allclose(res[1], res[0], rtol=tol, atol=tol)


# ---- activations ----

ACTS = {
    "gelu": (_core._gelu_backward, lambda x: TF.gelu(x)),
    "gelu_tanh": (_core._gelu_tanh_backward, lambda x: TF.gelu(x, approximate="tanh")),
    "silu": (_core._silu_backward, TF.silu),
}


def act_ref(kind, g, x):
    tx = leaf(x)
    ACTS[kind][1](tx).backward(torch.tensor(np.array(np.broadcast_to(g, np.shape(x)))))
    return tx.grad


def act_values(shape, dtype, seed):
    """Inputs over both tails and the middle, where the formulas switch branches."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 3
    x.reshape(-1)[:6] = [0.0, -0.3, 0.6, -9.0, 12.0, -25.0][: x.size]
    return rounded(x, dtype)


@pytest.mark.parametrize("device,dtype", dtype_device_params())
@pytest.mark.parametrize("kind", list(ACTS))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_activation_backward_matches_torch(device, dtype, kind, layout):
    x = act_values((4, 5), dtype, 0)
    g = randn((4, 5), dtype, 1)
    other = "contiguous" if layout != "contiguous" else "sliced"
    out = ACTS[kind][0](place(g, dtype, device, layout), place(x, dtype, device, other))
    assert_grad_close(out, act_ref(kind, g, x), dtype, f"{kind} {layout}")


@pytest.mark.parametrize("device,dtype", dtype_device_params())
@pytest.mark.parametrize("kind", list(ACTS))
def test_activation_backward_broadcast_and_0d(device, dtype, kind):
    x = act_values((3, 4), dtype, 2)
    gt, g = broadcast_grad((3, 4), dtype, device, 4, "scalar")
    assert_grad_close(ACTS[kind][0](gt, place(x, dtype, device, "transposed")), act_ref(kind, g, x), dtype, "scalar")
    # broadcasting like a binary op: a 0-d grad against a (3, 4) input, a row grad against a column
    g0 = rounded(1.25, dtype)
    out = ACTS[kind][0](place(g0, dtype, device), place(x, dtype, device))
    assert_grad_close(out, act_ref(kind, g0, x), dtype, "0d")
    gr, xc = randn((1, 4), dtype, 5), act_values((3, 1), dtype, 6)
    out = ACTS[kind][0](place(gr, dtype, device), place(xc, dtype, device))
    assert_grad_close(out, act_ref(kind, gr, np.broadcast_to(xc, (3, 4))), dtype, "row x column")
    x0 = rounded(-0.7, dtype)
    assert_grad_close(ACTS[kind][0](place(g0, dtype, device), place(x0, dtype, device)), act_ref(kind, g0, x0), dtype,
                      "0d x 0d")


@pytest.mark.parametrize("kind", list(ACTS))
@pytest.mark.parametrize("dtype", [bm.float32, bm.float16, bm.bfloat16])
def test_activation_backward_cpu_and_simulator_agree_bitwise(kind, dtype):
    x = rounded(np.concatenate([np.linspace(-12, 12, 2001), [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30]]), dtype)
    g = rounded(np.linspace(-2, 2, x.size), dtype)
    res = [ACTS[kind][0](place(g, dtype, d), place(x, dtype, d)).to(bm.float32).numpy() for d in ("cpu", SIM)]
    nan = np.isnan(res[0])  # NaN stays NaN on both (its sign bit is not specified)
    np.testing.assert_array_equal(nan, np.isnan(res[1]))
    np.testing.assert_array_equal(res[0][~nan].view(np.uint32), res[1][~nan].view(np.uint32))


@pytest.mark.parametrize("kind", list(ACTS))
def test_activation_backward_float32_accuracy(kind):
    """The shared float32 formulas over a dense grid against float64 torch: a few ulp of the result
    or of the largest term (near the zeros of the derivative the terms cancel)."""
    x = rounded(np.linspace(-15, 15, 30001), bm.float32)
    ones = np.ones_like(x)
    out = np64(ACTS[kind][0](place(ones, bm.float32, "cpu"), place(x, bm.float32, "cpu")))
    ref = act_ref(kind, ones, x).numpy()
    np.testing.assert_allclose(out, ref, rtol=4e-6, atol=3e-7)


@pytest.mark.parametrize("device", DEVICES)
def test_backward_errors_devices_first_then_dtype_then_shape(device):
    other = next((d for d in DEVICES if d != device), None)
    a = bm.ones(2, 3, device=device)
    if other is not None:
        with pytest.raises(bm.DeviceMismatchError, match=r"\[softmax_backward\] inputs are on different devices"):
            _core._softmax_backward(a, bm.ones(2, 3, dtype=bm.int32, device=other), 1)
        with pytest.raises(bm.DeviceMismatchError, match=r"\[gelu_backward\]"):
            _core._gelu_backward(a, bm.ones(2, 3, device=other))
    with pytest.raises(bm.UnsupportedError, match=r"\[silu_backward\] input must be a floating point tensor"):
        _core._silu_backward(a, bm.ones(2, 3, dtype=bm.int32, device=device))
    with pytest.raises(ValueError, match=r"\[log_softmax_backward\] grad_output has shape \(2, 3\) but output"):
        _core._log_softmax_backward(a, bm.ones(3, 2, device=device), 1)
    with pytest.raises(IndexError, match=r"\[softmax_backward\] dim 2 is out of range"):
        _core._softmax_backward(a, a, 2)
    with pytest.raises(ValueError, match=r"\[gelu_tanh_backward\]"):
        _core._gelu_tanh_backward(a, bm.ones(4, device=device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
def test_softmax_backward_many_unmergeable_dims(device, kind):
    """10 dims that merge nowhere: more rows dims than a shader takes (the Metal host splits)."""
    shape, perm = (2,) * 10, tuple(reversed(range(10)))
    g, y, ref = softmax_case(kind, shape, 3, bm.float32, seed=12)

    def rev(v):
        return place(np.ascontiguousarray(np.transpose(v, perm)), bm.float32, device).permute(*perm)

    assert_grad_close(SOFTMAX[kind][0](rev(g), rev(y), 3), ref, bm.float32, kind)
