"""gelu (erf and tanh forms) and silu: accuracy against float64 references on dense grids, torch
parity (values, special values, dtypes), the backends' agreement, and the layers. Every layout and
dtype runs through the op_cases rows (test_ops.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import bessemer as bm
from bessemer import nn
from bessemer.nn import functional as F
from bessemer.testing import assert_close, to_numpy
from harness import DEVICES

GRID = np.concatenate([np.linspace(-14, 10, 120001), np.linspace(-1, 1, 20001),
                       np.random.default_rng(0).standard_normal(20000) * 3]).astype(np.float32)


def gelu64(x: np.ndarray) -> np.ndarray:
    return x * 0.5 * np.vectorize(math.erfc, otypes=[np.float64])(-x / math.sqrt(2))


def ulp_error(actual: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|actual - exact| in units of the float32 spacing at exact (tiny results count absolutely)."""
    spacing = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    spacing = np.maximum(spacing, np.spacing(np.float32(1e-30)))
    return np.abs(actual.astype(np.float64) - exact) / spacing


@pytest.mark.parametrize("device", DEVICES)
def test_gelu_float32_is_accurate_to_a_few_ulp(device):
    """Both backends use shaders/erf.h (MSL has no erf) with the shared exp of shaders/bm_exp_f32.h
    (<= 2 ulp): within 4.5 ulp of float64 everywhere, including x < 0 where 1 + erf(x / sqrt2)
    would cancel."""
    x64 = GRID.astype(np.float64)
    err = ulp_error(to_numpy(F.gelu(bm.tensor(GRID, device=device))), gelu64(x64))
    assert err.max() <= 4.5, f"max error {err.max():.2f} ulp at x = {GRID[err.argmax()]!r}"


@pytest.mark.parametrize("device", DEVICES)
def test_gelu_tanh_and_silu_are_accurate(device):
    """silu within 4 ulp. gelu_tanh = x * sigmoid(2u): its float32 argument 2u = O(x^3) carries
    ~1 ulp, which exp turns into |2u| ulp of the result, so the bound scales with |2u| (torch's
    float32 x/2 (1 + tanh(u)) is far worse there: it cancels to 0)."""
    x64 = GRID.astype(np.float64)
    u2 = 2 * math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3)
    with np.errstate(over="ignore"):  # float64 x / (1 + exp(-2u)): x/2 (1 + tanh(u)) without the cancellation
        tanh_exact, silu_exact = x64 / (1 + np.exp(-u2)), x64 / (1 + np.exp(-x64))
    err = ulp_error(to_numpy(F.gelu(bm.tensor(GRID, device=device), approximate="tanh")), tanh_exact)
    bound = 3 * np.maximum(1, np.abs(u2))
    assert np.all(err <= bound), f"gelu_tanh: {err.max():.2f} ulp at x = {GRID[(err / bound).argmax()]!r}"
    err = ulp_error(to_numpy(F.silu(bm.tensor(GRID, device=device))), silu_exact)
    assert err.max() <= 4, f"silu: max error {err.max():.2f} ulp at x = {GRID[err.argmax()]!r}"


@pytest.mark.parametrize("device", DEVICES)
def test_activations_match_torch_including_special_values(device):
    x = np.array([-np.inf, -100, -20, -5.5, -1, -0.0, 0.0, 1e-30, 0.3, 2, 7, 100, np.inf, np.nan], np.float32)
    t = bm.tensor(x, device=device)
    tx = torch.from_numpy(x).double()  # torch's float64 results, rounded, as the oracle
    for ours, theirs in [(F.gelu(t), TF.gelu(tx)), (F.gelu(t, approximate="tanh"), TF.gelu(tx, approximate="tanh")),
                         (F.silu(t), TF.silu(tx))]:
        a, e = to_numpy(ours), theirs.numpy()
        assert_close(a, e, 1e-6, 1e-30)
        np.testing.assert_array_equal(np.signbit(a[~np.isnan(e)]), np.signbit(e[~np.isnan(e)]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [bm.float16, bm.bfloat16, bm.float32])
def test_activations_keep_dtype_and_match_torch(device, dtype):
    x = np.random.default_rng(1).standard_normal((5, 7)).astype(np.float32) * 4
    t = bm.tensor(x, device=device).to(dtype)
    tx = torch.from_numpy(to_numpy(t).astype(np.float32)).double()
    tol = {bm.float16: (1e-3, 1e-4), bm.bfloat16: (8e-3, 1e-3), bm.float32: (2e-6, 1e-7)}[dtype]
    for ours, theirs in [(F.gelu(t), TF.gelu(tx)), (F.gelu(t, approximate="tanh"), TF.gelu(tx, approximate="tanh")),
                         (F.silu(t), TF.silu(tx))]:
        assert ours.dtype == dtype and str(ours.device) == device
        assert_close(ours, theirs.numpy(), *tol, check_dtype=False)


def test_metal_sim_agrees_with_cpu():
    """Both run the shared formulas (shaders/bm_exp_f32.h, erf.h, activation.h): the simulator,
    running the shaders, stays within the bounds below of the CPU."""
    assert "metal-sim:0" in DEVICES  # the simulator is built on every platform
    cpu, sim = bm.tensor(GRID), bm.tensor(GRID, device="metal-sim")
    x64 = GRID.astype(np.float64)
    u2 = np.abs(2 * math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3))
    for name, fn, bound in [("silu", F.silu, 6), ("gelu", F.gelu, 5),
                            ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), 6 * np.maximum(1, u2))]:
        err = ulp_error(to_numpy(fn(sim)), to_numpy(fn(cpu)).astype(np.float64))
        assert np.all(err <= bound), f"{name}: {err.max():.2f} ulp apart at x = {GRID[err.argmax()]!r}"


@pytest.mark.parametrize("device", DEVICES)
def test_activation_layers_and_errors(device):
    x = bm.tensor(np.linspace(-3, 3, 11, dtype=np.float32), device=device)
    tx = torch.from_numpy(np.linspace(-3, 3, 11, dtype=np.float32)).double()  # float32 torch gelu cancels at x < 0
    assert_close(nn.GELU()(x), TF.gelu(tx).numpy(), 2e-6, 1e-7)
    assert_close(nn.GELU("tanh")(x), TF.gelu(tx, approximate="tanh").numpy(), 2e-6, 1e-7)
    assert_close(nn.SiLU()(x), TF.silu(tx).numpy(), 2e-6, 1e-7)
    assert repr(nn.GELU("tanh")) == "GELU(approximate='tanh')" and repr(nn.SiLU()) == "SiLU()"
    y = bm.tensor(np.array([-1.0, 2.0], np.float32), device=device)
    assert F.silu(y, inplace=True) is y
    assert_close(y, TF.silu(torch.tensor([-1.0, 2.0]).double()).numpy(), 2e-6, 1e-7)
    with pytest.raises(ValueError, match=r"\[gelu\] approximate must be 'none' or 'tanh', got 'fast'"):
        F.gelu(x, approximate="fast")
    with pytest.raises(ValueError, match=r"\[GELU\] approximate"):
        nn.GELU("erf")
    for fn in (F.gelu, F.silu):
        with pytest.raises(bm.UnsupportedError, match=r"\[(gelu|silu)\] expected a floating point input"):
            fn(bm.tensor([1, 2], device=device))
