"""float32 <-> float16 / bfloat16 conversions: the vectorised runs (contiguous tensors, csrc/cpu/half_convert.cpp)
give the same bits as the element-by-element conversion (strided views), NaN payloads included, on every float16
bit pattern and on float32 patterns at every exponent's edges; and NumPy's / torch's bits for every number."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import bessemer as bm
from harness import DEVICES

ALL_HALF = np.arange(1 << 16, dtype=np.uint16)


def _float_patterns() -> np.ndarray:
    """Every exponent with mantissas at the rounding edges (ties, just above and below: the 13 or 16 bits a
    conversion drops), signs, infinities, NaNs with payloads, and random patterns."""
    exps = np.arange(256, dtype=np.uint32) << 23
    edges = np.array([0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x3000, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x10000,
                      0x18000, 0x400000, 0x7FE000, 0x7FF000, 0x7FFFFF], dtype=np.uint32)
    grid = (exps[:, None] | edges[None, :]).ravel()
    rand = np.random.default_rng(0).integers(0, 1 << 32, 200_000, dtype=np.uint64).astype(np.uint32)
    both = np.concatenate([grid, grid | np.uint32(0x80000000), rand])
    return both.view(np.float32)


def _strided(a: np.ndarray, device) -> bm.Tensor:
    return bm.tensor(np.repeat(a, 2), device=device)[::2]  # every other element: the element-wise path


@pytest.mark.parametrize("device", DEVICES)
def test_float16_to_float32_every_bit_pattern(device):
    h = ALL_HALF.view(np.float16)
    got = bm.tensor(h, device=device).to(bm.float32).numpy()
    assert np.array_equal(got.view(np.uint32), _strided(h, device).to(bm.float32).numpy().view(np.uint32))
    want = h.astype(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))
    assert np.isnan(got[nan]).all()
    if device == "cpu":  # the CPU keeps a NaN's sign and payload (a GPU may quiet it)
        bits = ALL_HALF[nan].astype(np.uint32)
        assert np.array_equal(got[nan].view(np.uint32) & 0x807FFFFF, (bits & 0x3FF) << 13 | (bits & 0x8000) << 16)


@pytest.mark.parametrize("device", DEVICES)
def test_float32_to_float16_rounds_like_numpy(device):
    f = _float_patterns()
    got = bm.tensor(f, device=device).to(bm.float16).numpy()
    assert np.array_equal(got.view(np.uint16), _strided(f, device).to(bm.float16).numpy().view(np.uint16))
    nan = np.isnan(f)
    with np.errstate(over="ignore"):
        want = f.astype(np.float16)
    assert np.array_equal(got[~nan].view(np.uint16), want[~nan].view(np.uint16))
    assert np.isnan(got[nan]).all()


@pytest.mark.parametrize("device", DEVICES)
def test_float32_to_bfloat16_rounds_like_torch(device):
    f = _float_patterns()
    got = bm.tensor(f, device=device).to(bm.bfloat16).to(bm.float32).numpy()
    assert np.array_equal(got.view(np.uint32),
                          _strided(f, device).to(bm.bfloat16).to(bm.float32).numpy().view(np.uint32))
    nan = np.isnan(f)
    want = torch.from_numpy(f).to(torch.bfloat16).float().numpy()
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))
    assert np.isnan(got[nan]).all()
