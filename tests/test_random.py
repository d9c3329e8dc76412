"""Seeded randomness: distinct draws, exact replay, documented defaults, and the Philox stream
checked against an independent NumPy implementation of Philox4x32-10."""

import subprocess
import sys

import numpy as np
import pytest

import bessemer as bm
from bessemer import _core
from harness import DEVICES, FLOATS, dtypes_on

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85


def philox_numpy(seed: int, blocks: np.ndarray) -> np.ndarray:
    """Philox4x32-10 of counters {lo(block), hi(block), 0, 0} under key {lo(seed), hi(seed)}: (n, 4) uint32."""
    c0 = (blocks & 0xFFFFFFFF).astype(np.uint64)
    c1 = (blocks >> 32).astype(np.uint64)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    k0, k1 = seed & 0xFFFFFFFF, seed >> 32
    mask = np.uint64(0xFFFFFFFF)
    for r in range(10):
        if r:
            k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
        p0, p1 = np.uint64(M0) * c0, np.uint64(M1) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & mask,
                          (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & mask)
    return np.stack([c0, c1, c2, c3], axis=1).astype(np.uint32)


def test_philox_matches_random123_known_answers():
    out = philox_numpy(0, np.array([0], dtype=np.uint64))
    assert [hex(x) for x in out[0]] == ["0x6627e8d5", "0xe169c58d", "0xbc57ac4c", "0x9b00dbd8"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("seed", [0, 1, 2**32 + 5, 2**63 + 12345])
def test_uniform_bits_follow_the_documented_counter_layout(device, seed):
    g = bm.Generator(device).manual_seed(seed)
    bm.rand(7, generator=g, device=device)  # advances the offset by 2 blocks
    got = bm.rand(10, generator=g, device=device).numpy()
    words = philox_numpy(seed, np.arange(2, 5, dtype=np.uint64)).reshape(-1)[:10]
    want = (words >> 8).astype(np.float64) * 2.0**-24
    np.testing.assert_array_equal(got, want.astype(np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_consecutive_draws_differ_at_every_position(device):
    for n in (1, 2, 3, 4, 1023, 1024):
        draws = np.stack([bm.rand(n, device=device).numpy() for _ in range(100)])
        assert (draws.std(axis=0) > 0).all(), f"a position stays constant for size {n}"
        assert len({d.tobytes() for d in draws}) == 100


@pytest.mark.parametrize("device", DEVICES)
def test_seed_replays_and_large_seeds_differ(device):
    bm.manual_seed(1234)
    a = bm.randn(50, device=device).numpy()
    b = bm.randn(50, device=device).numpy()
    bm.manual_seed(1234)
    np.testing.assert_array_equal(bm.randn(50, device=device).numpy(), a)
    np.testing.assert_array_equal(bm.randn(50, device=device).numpy(), b)
    g1 = bm.Generator(device).manual_seed(5)
    g2 = bm.Generator(device).manual_seed(5 + 2**32)
    assert not np.array_equal(bm.rand(16, generator=g1).numpy(), bm.rand(16, generator=g2).numpy())
    g3 = bm.Generator(device).manual_seed(-1)  # torch maps negative seeds to 0xffff_ffff_ffff_ffff + seed
    assert g3.initial_seed() == 0xFFFF_FFFF_FFFF_FFFF - 1
    with pytest.raises(ValueError, match=r"\[manual_seed\]"):
        bm.manual_seed(2**64)


def test_same_seed_same_bits_in_a_separate_process():
    code = ("import bessemer as bm; bm.manual_seed(99); "
            "print(bm.rand(8).numpy().tobytes().hex(), bm.randn(3, dtype=bm.float64).numpy().tobytes().hex())")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            for _ in range(2)]
    bm.manual_seed(99)
    here = bm.rand(8).numpy().tobytes().hex() + " " + bm.randn(3, dtype=bm.float64).numpy().tobytes().hex() + "\n"
    assert runs[0] == runs[1] == here


def test_default_seed_policy_is_documented_and_uniform():
    code = "import bessemer as bm; print([bm.initial_seed(d) for d in bm.available_devices()])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert set(eval(out)) == {67280421310721}
    assert "67280421310721" in bm.random.__doc__


@pytest.mark.parametrize("device,dtype", [(d, t) for d in DEVICES for t in dtypes_on(d, FLOATS)])
def test_distributions(device, dtype):
    u = bm.rand(200_000, dtype=dtype, device=device).to(bm.float32).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    z = bm.randn(1_000_000, dtype=dtype, device=device).to(bm.float32).numpy().astype(np.float64)
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    t = bm.empty(1000, dtype=dtype, device=device)
    _core.uniform_(t, -3.0, 5.0)
    v = t.to(bm.float32).numpy()
    assert v.min() >= -3 and v.max() <= 5 and abs(v.mean() - 1) < 0.3


@pytest.mark.parametrize("device", DEVICES)
def test_strided_output_gets_values_in_logical_order(device):
    g = bm.Generator(device).manual_seed(7)
    flat = bm.rand(12, generator=g, device=device).numpy()
    g.manual_seed(7)
    t = bm.empty(4, 3, device=device).T  # shape (3, 4), strides (1, 3)
    _core.uniform_(t, 0.0, 1.0, g._g)
    np.testing.assert_array_equal(t.numpy().reshape(-1), flat)


def test_bad_arguments():
    with pytest.raises(bm.UnsupportedError, match=r"\[uniform_\].*int32"):
        _core.uniform_(bm.empty(3, dtype=bm.int32))
    with pytest.raises(ValueError, match=r"\[normal_\] expected std >= 0"):
        _core.normal_(bm.empty(3), 0.0, -1.0)


def _draws(device, dtype, seed):
    """Consecutive draws from one seeded generator on `device`: as float32 numpy arrays."""
    g = bm.Generator(device).manual_seed(seed)
    out = {}
    bm.rand(7, dtype=dtype, generator=g)  # moves the counter so later draws start mid-stream
    out["rand_1037"] = bm.rand(1037, dtype=dtype, generator=g)
    out["randn_1037"] = bm.randn(1037, dtype=dtype, generator=g)
    t = bm.empty(5, 7, dtype=dtype, device=device).T  # strided output: values in logical order
    out["uniform_T"] = _core.uniform_(t, -3.0, 5.0, g._g)
    t = bm.empty(5, 7, dtype=dtype, device=device).T
    out["normal_T"] = _core.normal_(t, 2.5, 0.5, g._g)
    # 9 dims that cannot merge (reversed strides): more than the 8 a Metal launch takes, so it is
    # split into launches of 3**8 elements, an odd count: later launches start mid Philox block
    t = bm.empty(*[3] * 9, dtype=dtype, device=device).permute(*range(8, -1, -1))
    out["uniform_9d"] = _core.uniform_(t, 0.0, 1.0, g._g)
    t = bm.empty(*[3] * 9, dtype=dtype, device=device).permute(*range(8, -1, -1))
    out["normal_9d"] = _core.normal_(t, 0.0, 1.0, g._g)
    return {k: v.to(bm.float32).numpy() for k, v in out.items()}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [bm.float32, bm.float16, bm.bfloat16])
@pytest.mark.parametrize("seed", [3, 2**32 + 7])
def test_same_seed_same_values_as_cpu(device, dtype, seed):
    cpu, dev = _draws("cpu", dtype, seed), _draws(device, dtype, seed)
    for name in cpu:
        want, got = cpu[name], dev[name]
        assert got.shape == want.shape
        if name.startswith(("rand_", "uniform")) or device.startswith(("cpu", "metal-sim")):
            # uniform bits are exact integer arithmetic everywhere; the simulator runs the same libm
            # as the CPU backend, so its normals are identical too
            np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg=name)
        else:
            # a real GPU's precise log/sin/cos may differ in the last bits: within 2 ulp of the dtype
            ulp = np.spacing(np.abs(want)) if dtype == bm.float32 else \
                np.abs(want) * (2.0**-10 if dtype == bm.float16 else 2.0**-7)
            # Box-Muller's error is relative to its radius sqrt(-2 log u), not to the (maybe small)
            # output: allow 2 ulp of the output plus 2 ulp of 1 (the radius's scale)
            tol = 2 * ulp + 2 * np.spacing(np.float32(1.0)) * (1.0 if dtype == bm.float32 else 2.0**13)
            assert np.all(np.abs(got - want) <= tol), f"{name}: further from the CPU than its libm explains"
