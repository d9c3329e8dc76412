"""dropout: masks from the device's Philox stream (the same bits on every device, checked against
the NumPy Philox of test_random.py), statistics, fresh masks per call, eval mode, strided inputs
(the mask follows logical element order), the Dropout layer and errors."""

import numpy as np
import pytest
import torch
from test_random import philox_numpy

import bessemer as bm
from bessemer import _core, nn
from bessemer.nn import functional as F
from harness import DEVICES

GPUS = [d for d in DEVICES if d != "cpu"]
HALF = [bm.float32, bm.float16, bm.bfloat16]


def keep_ref(seed: int, first_block: int, n: int, p: float) -> np.ndarray:
    """Element i is kept iff the uniform of word i % 4 of block first_block + i / 4 is >= p."""
    words = philox_numpy(seed, np.arange(first_block, first_block + (n + 3) // 4, dtype=np.uint64)).reshape(-1)[:n]
    return (words >> 8).astype(np.float64) * 2.0**-24 >= np.float32(p)


def seeded(x, p, seed):
    return _core.dropout(x, p, True, bm.Generator(x.device).manual_seed(seed)._g)


def bits(t) -> np.ndarray:
    return t.to(bm.float32).numpy().view(np.uint32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_fraction_kept_and_scaling(device, p):
    bm.manual_seed(11)
    x = bm.rand(100_000, device=device) + 1  # no zeros in the input
    y = F.dropout(x, p).numpy()
    kept = y != 0
    assert abs(kept.mean() - (1 - p)) < 0.01  # binomial std is < 0.0016
    xs = x.numpy()
    np.testing.assert_array_equal(y[kept], xs[kept] * np.float32(1 / (1 - p)))
    np.testing.assert_array_equal(kept, keep_ref(11, 25_000, 100_000, p))  # after rand's 25000 blocks


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("shape", [(1,), (7, 13), (3, 4, 5)])
def test_same_seed_same_mask_on_every_device(dtype, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    outs = []
    for d in DEVICES:
        bm.manual_seed(1234)
        outs.append(F.dropout(bm.tensor(x, dtype=dtype, device=d), 0.4))
    for o in outs[1:]:
        np.testing.assert_array_equal(bits(o), bits(outs[0]))  # bit for bit
    keep = keep_ref(1234, 0, x.size, 0.4).reshape(shape)
    xr = bm.tensor(x, dtype=dtype).to(bm.float32).numpy()
    want = bm.tensor(np.where(keep, xr * np.float32(1 / 0.6), 0), dtype=dtype).to(bm.float32).numpy()
    np.testing.assert_array_equal(outs[0].to(bm.float32).numpy(), want)


@pytest.mark.parametrize("device", DEVICES)
def test_dropout_draws_from_the_device_stream(device):
    bm.manual_seed(5)
    y = F.dropout(bm.ones(10, device=device), 0.5)  # 10 elements take 3 counter blocks
    np.testing.assert_array_equal(y.numpy() != 0, keep_ref(5, 0, 10, 0.5))
    r = bm.rand(4, device=device).numpy()
    words = philox_numpy(5, np.array([3], dtype=np.uint64)).reshape(-1)
    np.testing.assert_array_equal(r, ((words >> 8).astype(np.float64) * 2.0**-24).astype(np.float32))


@pytest.mark.parametrize("device", DEVICES)
def test_consecutive_calls_differ(device):
    x = bm.ones(64, device=device)
    masks = np.stack([F.dropout(x, 0.5).numpy() != 0 for _ in range(100)])
    assert len({m.tobytes() for m in masks}) == 100
    assert masks.any(axis=0).all() and (~masks).any(axis=0).all()  # every position both kept and dropped
    single = np.array([F.dropout(bm.ones(1, device=device), 0.5).item() for _ in range(100)])
    assert (single == 0).any() and (single == 2).any()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["transposed", "sliced", "offset", "broadcast", "many_dims"])
def test_strided_input_mask_follows_logical_order(device, layout):
    base = bm.tensor(np.random.default_rng(1).standard_normal((9, 11)).astype(np.float32), device=device)
    if layout == "transposed":
        x = base.T
    elif layout == "sliced":
        x = base[1::2, ::3]
    elif layout == "offset":
        x = base.reshape(-1)[7:95].reshape(8, 11)
    elif layout == "broadcast":
        x = base[2:3, :].expand(6, 11)
    else:  # 9 dims that merge nowhere: the Metal launch is split, index_base carries on
        x = bm.tensor(np.arange(512, dtype=np.float32) + 1, device=device).reshape((2,) * 9)
        x = x.permute(list(range(9))[::-1])
    got = seeded(x, 0.3, 42)
    assert got.shape == x.shape
    np.testing.assert_array_equal(bits(got), bits(seeded(x.contiguous(), 0.3, 42)))
    keep = keep_ref(42, 0, x.numel(), 0.3).reshape(x.shape)
    np.testing.assert_array_equal(got.numpy(), np.where(keep, x.numpy() * np.float32(1 / 0.7), 0))


@pytest.mark.parametrize("device", DEVICES)
def test_eval_p0_p1_inplace_and_empty(device):
    x = bm.tensor([1.0, -2.0, float("nan"), 4.0], device=device)
    assert F.dropout(x, 0.5, training=False) is x
    same = F.dropout(x, 0.0)
    assert same is not x and np.array_equal(same.numpy(), x.numpy(), equal_nan=True)
    want = torch.nn.functional.dropout(torch.tensor([1.0, -2.0, float("nan"), 4.0]), 1.0).numpy()
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), want)  # [0, -0, nan, 0]: input * 0, as torch
    dropped_nan = F.dropout(bm.full((64,), float("nan"), device=device), 0.5).numpy()
    assert np.isnan(dropped_nan).all()  # NaN * 0 is NaN, as torch's input * mask
    g = bm.Generator(device).manual_seed(9)
    assert _core.dropout(bm.zeros(0, 3, device=device), 0.5, True, g._g).shape == (0, 3)
    assert g.get_state() == (9, 0)  # an empty input draws nothing
    y = bm.ones(1000, device=device)
    out = F.dropout(y, 0.5, inplace=True)
    assert out is y and set(np.unique(y.numpy())) == {0.0, 2.0}


@pytest.mark.parametrize("device", DEVICES)
def test_dropout_layer(device):
    d = nn.Dropout(0.25)
    assert repr(d) == "Dropout(p=0.25, inplace=False)" and list(d.state_dict()) == []
    x = bm.ones(4000, device=device)
    kept = d(x).numpy()
    assert set(np.unique(kept)) == {0.0, np.float32(1 / 0.75)} and abs((kept != 0).mean() - 0.75) < 0.05
    d.eval()
    assert d(x) is x
    d.train()
    assert not np.array_equal(d(x).numpy(), x.numpy())
    seq = nn.Sequential(nn.Linear(3, 3), nn.Dropout()).to(device).eval()
    lin = seq[0](bm.ones(2, 3, device=device)).numpy()
    np.testing.assert_array_equal(seq(bm.ones(2, 3, device=device)).numpy(), lin)


@pytest.mark.parametrize("device", DEVICES)
def test_dropout_errors(device):
    x = bm.ones(3, device=device)
    for p in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match=r"\[dropout\] dropout probability has to be between 0 and 1, but got"):
            F.dropout(x, p)
        with pytest.raises(ValueError, match=r"\[dropout\]"):
            F.dropout(x, p, training=False)  # checked in eval mode too, as torch
        with pytest.raises(ValueError, match=r"\[Dropout\] dropout probability"):
            nn.Dropout(p)
    with pytest.raises(bm.UnsupportedError, match=r"\[dropout\] expected a floating point input, got int64"):
        F.dropout(bm.ones(3, dtype=bm.int64, device=device), 0.5)
    assert F.dropout(bm.ones(3, dtype=bm.int64, device=device), 0.5, training=False).dtype is bm.int64
    np.testing.assert_array_equal(x.numpy(), [1, 1, 1])


@pytest.mark.parametrize("dev", GPUS)
def test_generator_on_another_device(dev):
    with pytest.raises(bm.DeviceMismatchError, match=rf"\[dropout\] .*input on cpu, generator on {dev}"):
        _core.dropout(bm.ones(3), 0.5, True, bm.Generator(dev)._g)
