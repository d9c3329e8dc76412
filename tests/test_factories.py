"""Factories with torch's signatures against torch (shapes, dtypes, values where deterministic): the
*_like family, eye, linspace, logspace; randint and randperm against a NumPy Philox oracle and
identical on every device for one seed."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from test_random import philox_numpy

import bessemer as bm
from harness import DEVICES, dtypes_on

TORCH = {bm.bool: torch.bool, bm.int8: torch.int8, bm.uint8: torch.uint8, bm.int16: torch.int16,
         bm.int32: torch.int32, bm.int64: torch.int64, bm.float16: torch.float16, bm.bfloat16: torch.bfloat16,
         bm.float32: torch.float32, bm.float64: torch.float64}
FROM_TORCH = {v: k for k, v in TORCH.items()}


def as_np(t):
    return (t.float() if t.dtype in (bm.bfloat16, torch.bfloat16) else t).numpy()


# ---- *_like ----

@pytest.mark.parametrize("device", DEVICES)
def test_like_factories_keep_shape_dtype_and_device(device):
    for dt in dtypes_on(device, list(TORCH)):
        x = bm.zeros(2, 3, dtype=dt, device=device).transpose(0, 1)
        tx = torch.zeros(2, 3, dtype=TORCH[dt]).transpose(0, 1)
        for ours, theirs in ((bm.zeros_like(x), torch.zeros_like(tx)), (bm.ones_like(x), torch.ones_like(tx)),
                             (bm.full_like(x, 5), torch.full_like(tx, 5)), (bm.empty_like(x), None)):
            assert ours.dtype == dt and str(ours.device) == device and tuple(ours.shape) == (3, 2)
            if theirs is not None:  # empty_like's values are whatever the memory held
                np.testing.assert_array_equal(as_np(ours), as_np(theirs))
        assert bm.ones_like(x, dtype=bm.int16).dtype == bm.int16
        assert str(bm.zeros_like(x, device="cpu").device) == "cpu"
    x = bm.zeros(4, 5, device=device)
    r, n = bm.rand_like(x), bm.randn_like(x, dtype=bm.float16)
    assert r.dtype == bm.float32 and n.dtype == bm.float16 and tuple(r.shape) == (4, 5)
    assert ((r.numpy() >= 0) & (r.numpy() < 1)).all()
    assert bm.ones_like(x, requires_grad=True).requires_grad
    with pytest.raises(TypeError, match=r"\[rand_like\]"):
        bm.rand_like(bm.zeros(2, dtype=bm.int32, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_rand_like_draws_from_the_output_devices_generator(device):
    x = bm.zeros(3, 7, device=device)
    for like, plain in ((bm.rand_like, bm.rand), (bm.randn_like, bm.randn)):
        bm.manual_seed(11)
        a = like(x).numpy()
        bm.manual_seed(11)
        np.testing.assert_array_equal(a, plain(3, 7, device=device).numpy())


# ---- eye, linspace, logspace ----

@pytest.mark.parametrize("device", DEVICES)
def test_eye_matches_torch(device):
    for args in ((3,), (2, 5), (4, 1), (0,), (0, 3)):
        for dt in dtypes_on(device, [None, bm.float32, bm.int8, bm.bool, bm.float64]):
            ours = bm.eye(*args, device=device) if dt is None else bm.eye(*args, dtype=dt, device=device)
            theirs = torch.eye(*args) if dt is None else torch.eye(*args, dtype=TORCH[dt])
            assert ours.dtype == FROM_TORCH[theirs.dtype] and str(ours.device) == device
            np.testing.assert_array_equal(as_np(ours), as_np(theirs))
    with pytest.raises(ValueError, match=r"\[eye\]"):
        bm.eye(-1)


LINSPACE_ARGS = [(0, 1, 5), (-3.5, 7.25, 11), (10, -10, 8), (0, 1, 1), (0, 1, 0), (1e-3, 1e3, 101), (-1, 1, 1000),
                 (2, 2, 4), (0.1, 0.7, 7)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("args", LINSPACE_ARGS, ids=str)
def test_linspace_matches_torch(device, args):
    ours, theirs = bm.linspace(*args, device=device), torch.linspace(*args)
    assert ours.dtype == bm.float32 and tuple(ours.shape) == tuple(theirs.shape)
    got, want = ours.numpy(), theirs.numpy()
    if got.size:
        assert got[0] == want[0] and got[-1] == want[-1]  # both ends exact, as torch's
    # torch's vectorised loop rounds differently from its scalar formula; within 2 ulp of the span
    span = max(abs(args[0]), abs(args[1]))
    np.testing.assert_allclose(got, want, rtol=0, atol=2 * np.spacing(np.float32(span)))
    for dt in dtypes_on(device, [bm.float64, bm.float16, bm.int64, bm.int16]):
        o, t = bm.linspace(*args, dtype=dt, device=device), torch.linspace(*args, dtype=TORCH[dt])
        assert o.dtype == dt
        tol = {bm.float64: 1e-12, bm.float16: 2e-3}.get(dt, 0)
        if dt in (bm.int64, bm.int16):  # truncation of values a rounding step apart may differ by one
            np.testing.assert_allclose(o.numpy(), t.numpy(), atol=1)
        else:
            np.testing.assert_allclose(o.numpy().astype(np.float64), t.numpy().astype(np.float64), rtol=tol,
                                       atol=tol * span)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("args", [(0, 3, 4), (-2, 2, 9), (0, 1, 1), (1, 0, 5), (-5, 5, 100)], ids=str)
def test_logspace_matches_torch(device, args):
    for base in (10.0, 2.0, 0.5):
        ours, theirs = bm.logspace(*args, base=base, device=device), torch.logspace(*args, base=base)
        assert ours.dtype == bm.float32 and tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-5)
    if device == "cpu":
        o, t = bm.logspace(*args, dtype=bm.float64), torch.logspace(*args, dtype=torch.float64)
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-13)


def test_linspace_argument_errors():
    with pytest.raises(ValueError, match=r"\[linspace\]"):
        bm.linspace(0, 1, -1)
    with pytest.raises(TypeError, match=r"\[linspace\]"):
        bm.linspace(0, 1, 2.5)
    with pytest.raises(TypeError, match=r"\[logspace\]"):
        bm.logspace("a", 1, 2)


# ---- randint ----

def _randint_oracle(seed, offset_blocks, n, low, high):
    r = high - low
    if r <= 2**32:
        words = philox_numpy(seed, np.arange(offset_blocks, offset_blocks + (n + 3) // 4, dtype=np.uint64))
        bits = words.reshape(-1)[:n].astype(object)
    else:
        words = philox_numpy(seed, np.arange(offset_blocks, offset_blocks + (n + 1) // 2, dtype=np.uint64))
        w = words.reshape(-1, 2)[:n].astype(object)
        bits = w[:, 0] * 2**32 + w[:, 1]
    return np.array([low + int(b) % r for b in bits], dtype=object)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("low,high", [(0, 10), (-5, 5), (0, 2**32), (-(2**40), 2**40), (-(2**63), 2**63 - 1)])
def test_randint_follows_the_philox_stream(device, low, high):
    g = bm.Generator(device).manual_seed(77)
    bm.rand(5, generator=g)  # offset -> 2 blocks
    got = bm.randint(low, high, (3, 5), generator=g)
    assert got.dtype == bm.int64 and tuple(got.shape) == (3, 5) and str(got.device) == device
    want = _randint_oracle(77, 2, 15, low, high)
    assert got.numpy().reshape(-1).tolist() == [int(v) for v in want]
    words_per_value = 2 if high - low > 2**32 else 1
    assert g.get_state()[1] == 2 + (15 * words_per_value + 3) // 4


def test_randint_is_identical_on_every_device():
    draws = {}
    for d in DEVICES:
        bm.manual_seed(2026)
        draws[d] = [bm.randint(100, (7, 3), device=d).numpy(), bm.randint(-50, 50, (33,), device=d).numpy(),
                    bm.randint(0, 200, (10,), dtype=bm.uint8, device=d).numpy(),
                    bm.randint(3, 9, (5,), dtype=bm.float32, device=d).numpy()]
    ref = draws[DEVICES[0]]
    for d in DEVICES[1:]:
        for a, b in zip(ref, draws[d]):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("device", DEVICES)
def test_randint_signatures_dtypes_and_errors(device):
    bm.manual_seed(5)
    a = bm.randint(10, (1000,), device=device).numpy()
    assert a.min() >= 0 and a.max() < 10 and len(set(a.tolist())) == 10
    for dt in dtypes_on(device, [bm.int8, bm.uint8, bm.int16, bm.int32, bm.float16, bm.bfloat16, bm.float64]):
        t = bm.randint(-3 if dt != bm.uint8 else 0, 20, size=(50,), dtype=dt, device=device)
        assert t.dtype == dt
        v = t.float().numpy()
        assert (v == np.round(v)).all() and v.min() >= -3 and v.max() < 20
    assert tuple(bm.randint(low=2, high=4, size=(2, 2), device=device).shape) == (2, 2)
    assert tuple(bm.randint(0, 3, (0, 4), device=device).shape) == (0, 4)
    assert bm.randint(5, (), device=device).ndim == 0
    with pytest.raises(ValueError, match=r"\[randint\]"):
        bm.randint(5, 5, (2,), device=device)
    with pytest.raises(ValueError, match=r"\[randint\].*uint8"):
        bm.randint(-1, 5, (2,), dtype=bm.uint8, device=device)
    with pytest.raises(ValueError, match=r"\[randint\].*int8"):
        bm.randint(0, 129, (2,), dtype=bm.int8, device=device)
    with pytest.raises(bm.UnsupportedError, match=r"\[randint\]"):
        bm.randint(0, 2, (2,), dtype=bm.bool, device=device)
    with pytest.raises(TypeError, match=r"\[randint\]"):
        bm.randint(device=device)
    for bad in (2**63, -(2**63) - 1, 2**70):
        with pytest.raises(RuntimeError, match=r"^\[randint\] high = -?\d+ does not fit in 64 bits"):
            bm.randint(-(2**63), bad, (2,), device=device)
        with pytest.raises(RuntimeError, match=r"^\[randint\] low = "):
            bm.randint(bad, 2**62, (2,), device=device)


# torch's overflow rule for a fill value (c10 checked_convert): (dtype, value, fits).
FILL_VALUES = [(bm.int8, 127, True), (bm.int8, 128, False), (bm.int8, -128, True), (bm.int8, -129, False),
               (bm.int8, 127.0, True), (bm.int8, 127.5, False), (bm.uint8, 255, True), (bm.uint8, 256, False),
               (bm.uint8, -1, True), (bm.uint8, -255, True), (bm.uint8, -256, False), (bm.uint8, -1.0, False),
               (bm.int16, 40000, False), (bm.int32, 2**31, False), (bm.int32, -(2**31), True),
               (bm.int8, math.nan, False), (bm.int32, math.inf, False), (bm.float16, 65504, True),
               (bm.float16, 70000, False), (bm.float16, -1e5, False), (bm.float16, math.inf, True),
               (bm.float16, math.nan, True), (bm.bfloat16, 1e39, False), (bm.float32, 1e39, False),
               (bm.float32, -math.inf, True), (bm.int64, 2**63 - 1, True), (bm.bool, 300, True)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,value,fits", FILL_VALUES, ids=str)
def test_full_and_fill_refuse_a_value_that_overflows_the_dtype(device, dtype, value, fits):
    if dtype not in dtypes_on(device, [dtype]):
        return
    tdt = getattr(torch, str(dtype).split(".")[-1])
    try:  # the oracle: torch raises exactly where bessemer must
        ref = torch.full((3,), value, dtype=tdt)
    except RuntimeError:
        ref = None
    assert (ref is not None) == fits
    if not fits:
        with pytest.raises(RuntimeError, match=r"^\[full\] value .* cannot be converted to .* without overflow"):
            bm.full((3,), value, dtype=dtype, device=device)
        x = bm.zeros(3, dtype=dtype, device=device)
        with pytest.raises(RuntimeError, match=r"^\[fill_\] value "):
            x.fill_(value)
        assert (x.float().numpy() == 0).all()  # left as it was
        with pytest.raises(RuntimeError, match=r"^\[masked_fill\] value "):
            x.masked_fill(bm.ones(3, dtype=bm.bool, device=device), value)
        return
    got = bm.full((3,), value, dtype=dtype, device=device)
    np.testing.assert_array_equal(got.float().numpy(), ref.float().numpy())
    np.testing.assert_array_equal(bm.zeros(3, dtype=dtype, device=device).fill_(value).float().numpy(),
                                  ref.float().numpy())


# ---- randperm ----

def _randperm_oracle(seed, offset_blocks, n):
    words = philox_numpy(seed, np.arange(offset_blocks, offset_blocks + (n + 3) // 4, dtype=np.uint64)).reshape(-1)
    p = list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(words[i]) % (i + 1)
        p[i], p[j] = p[j], p[i]
    return p


@pytest.mark.parametrize("device", DEVICES)
def test_randperm_is_a_philox_permutation_and_advances_the_generator(device):
    for n in (0, 1, 2, 5, 17, 1000):
        g = bm.Generator(device).manual_seed(31)
        bm.rand(9, generator=g)  # offset 3 blocks
        p = bm.randperm(n, generator=g)
        assert p.dtype == bm.int64 and str(p.device) == device and tuple(p.shape) == (n,)
        assert sorted(p.tolist()) == list(range(n))
        assert p.tolist() == _randperm_oracle(31, 3, n)
        assert g.get_state()[1] == 3 + (n + 3) // 4
    assert bm.randperm(10, dtype=bm.int16, device=device).dtype == bm.int16
    assert bm.randperm(4, dtype=bm.float32, device=device).dtype == bm.float32
    with pytest.raises(ValueError, match=r"\[randperm\]"):
        bm.randperm(-1, device=device)
    with pytest.raises(ValueError, match=r"\[randperm\]"):
        bm.randperm(300, dtype=bm.int8, device=device)


def test_randperm_is_identical_on_every_device():
    perms = {}
    for d in DEVICES:
        bm.manual_seed(4)
        perms[d] = (bm.randperm(50, device=d).tolist(), bm.randperm(7, device=d).tolist())
    assert all(perms[d] == perms[DEVICES[0]] for d in DEVICES)
    bm.manual_seed(4)
    a = bm.randperm(50).tolist()
    assert bm.randperm(50).tolist() != a  # the next draw differs: the offset moved
