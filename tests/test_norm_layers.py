"""BatchNorm2d and LayerNorm layers against torch.nn on every device: state_dict keys and dtypes,
initialisation, train/eval behaviour over several steps (buffers included), momentum=None,
track_running_stats=False, affine=False, moving with to(), and errors that leave state alone."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer import nn
from bessemer.testing import assert_close, to_numpy
from harness import DEVICES


def rand(shape, seed=0, scale=1.0, shift=0.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale + shift).astype(np.float32)


def load_from_torch(ours: nn.Module, theirs: torch.nn.Module) -> None:
    ours.load_state_dict({k: bm.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})


def assert_same_state(ours: nn.Module, theirs: torch.nn.Module, msg: str = "") -> None:
    sd, tsd = ours.state_dict(), theirs.state_dict()
    assert list(sd) == list(tsd)
    for k, v in tsd.items():
        assert tuple(sd[k].shape) == tuple(v.shape), k
        assert_close(sd[k], v.detach().numpy(), 1e-5, 1e-6, check_dtype=False, msg=f"{k} {msg}")


def torch_batch_norm2d(num_features, *, bias=True, **kwargs) -> torch.nn.BatchNorm2d:
    """torch.nn.BatchNorm2d(num_features, bias=bias, **kwargs), built without the `bias` keyword, which
    torch 2.11 (the GPU machines' torch) lacks: with affine and bias=False, torch 2.13 registers the
    parameter "bias" as None, and so does register_parameter here, on any torch version."""
    m = torch.nn.BatchNorm2d(num_features, **kwargs)
    if not bias and m.affine:
        m.register_parameter("bias", None)
    return m


@pytest.mark.parametrize("kwargs", [{}, {"affine": False}, {"track_running_stats": False}, {"bias": False}],
                         ids=["default", "no_affine", "no_stats", "no_bias"])
def test_batch_norm2d_state_dict_matches_torch(kwargs):
    ours, theirs = nn.BatchNorm2d(5, **kwargs), torch_batch_norm2d(5, **kwargs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [k for k, _ in ours.named_parameters()] == [k for k, _ in theirs.named_parameters()]
    assert_same_state(ours, theirs)  # weight 1, bias 0, running_mean 0, running_var 1, count 0
    if "num_batches_tracked" in ours.state_dict():
        nbt = ours.num_batches_tracked
        assert nbt.dtype == bm.int64 and tuple(nbt.shape) == ()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("momentum", [0.1, None], ids=["momentum", "cumulative"])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
def test_batch_norm2d_train_then_eval_matches_torch(device, momentum, affine):
    theirs = torch.nn.BatchNorm2d(4, momentum=momentum, affine=affine)
    if affine:
        with torch.no_grad():
            theirs.weight.copy_(torch.from_numpy(rand(4, 1, 0.3, 1.0)))
            theirs.bias.copy_(torch.from_numpy(rand(4, 2)))
    ours = nn.BatchNorm2d(4, momentum=momentum, affine=affine, device=device)
    load_from_torch(ours, theirs)
    for step in range(3):
        x = rand((3, 4, 5, 6), 10 + step, 1 + step, step)
        y = ours(bm.tensor(x, device=device))
        with torch.no_grad():
            want = theirs(torch.from_numpy(x))
        assert str(y.device) == device
        assert_close(y, want.numpy(), 1e-5, 1e-5, msg=f"step {step}")
        assert_same_state(ours, theirs, f"after step {step}")
    assert ours.num_batches_tracked.item() == 3
    ours.eval()
    theirs.eval()
    x = rand((2, 4, 3, 3), 20, 2.0, 1.0)
    with torch.no_grad():
        want = theirs(torch.from_numpy(x))
    assert_close(ours(bm.tensor(x, device=device)), want.numpy(), 1e-5, 1e-5)
    assert ours.num_batches_tracked.item() == 3  # eval does not count


@pytest.mark.parametrize("device", DEVICES)
def test_batch_norm2d_without_running_stats_uses_batch_stats_in_eval(device):
    ours = nn.BatchNorm2d(3, track_running_stats=False, device=device)
    theirs = torch.nn.BatchNorm2d(3, track_running_stats=False)
    ours.eval()
    theirs.eval()
    x = rand((2, 3, 4, 4), 3, 2.0, 1.0)
    with torch.no_grad():
        want = theirs(torch.from_numpy(x))
    assert_close(ours(bm.tensor(x, device=device)), want.numpy(), 1e-5, 1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_batch_norm2d_moves_with_to_and_rejects_bad_input(device):
    bn = nn.BatchNorm2d(3).to(device)
    for _, t in list(bn.named_parameters()) + list(bn.named_buffers()):
        assert str(t.device) == device
    x = rand((2, 3, 2, 2), 4)
    y = bn(bm.tensor(x, device=device))
    assert str(y.device) == device and str(bn.running_mean.device) == device
    before = to_numpy(bn.running_mean).copy()
    with pytest.raises(ValueError, match=r"\[BatchNorm2d\] expected 4D input \(got 3D input\)"):
        bn(bm.zeros(2, 3, 4, device=device))
    other = next(d for d in DEVICES if d != device)
    with pytest.raises(bm.DeviceMismatchError, match=r"\[batch_norm\]"):
        bn(bm.zeros(2, 3, 2, 2, device=other))
    assert bn.num_batches_tracked.item() == 1  # failed calls do not count
    np.testing.assert_array_equal(to_numpy(bn.running_mean), before)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [bm.float32, bm.float16])
def test_batch_norm2d_dtype_argument(device, dtype):
    bn = nn.BatchNorm2d(2, device=device, dtype=dtype)
    assert bn.weight.dtype == dtype and bn.running_var.dtype == dtype and bn.num_batches_tracked.dtype == bm.int64
    x = rand((4, 2, 3, 3), 5)
    y = bn(bm.tensor(x, device=device).to(dtype))
    want = torch.nn.BatchNorm2d(2)(torch.from_numpy(to_numpy(bm.tensor(x).to(dtype)).astype(np.float32)))
    assert y.dtype == dtype
    assert_close(y, want.detach().numpy(), 2e-3, 2e-3)


@pytest.mark.parametrize("kwargs", [{}, {"bias": False}, {"elementwise_affine": False}, {"eps": 1e-3}],
                         ids=["default", "no_bias", "no_affine", "eps"])
@pytest.mark.parametrize("device", DEVICES)
def test_layer_norm_layer_matches_torch(kwargs, device):
    ours, theirs = nn.LayerNorm((3, 5), device=device, **kwargs), torch.nn.LayerNorm((3, 5), **kwargs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.normalized_shape == theirs.normalized_shape
    assert_same_state(ours, theirs)  # ones and zeros
    if theirs.weight is not None:
        with torch.no_grad():
            theirs.weight.copy_(torch.from_numpy(rand((3, 5), 1, 0.5, 1.0)))
            if theirs.bias is not None:
                theirs.bias.copy_(torch.from_numpy(rand((3, 5), 2)))
        load_from_torch(ours, theirs)
    x = rand((2, 5, 3), 3, 3.0, -1.0)  # fed transposed: (2, 3, 5) with strided last dims
    y = ours(bm.tensor(x, device=device).transpose(1, 2))
    with torch.no_grad():
        want = theirs(torch.from_numpy(x).transpose(1, 2))
    assert str(y.device) == device
    assert_close(y, want.numpy(), 1e-5, 1e-5)


def test_layer_norm_layer_int_shape_and_repr():
    ln = nn.LayerNorm(7, eps=1e-6)
    assert ln.normalized_shape == (7,) and tuple(ln.weight.shape) == (7,)
    assert repr(ln) == "LayerNorm((7,), eps=1e-06, elementwise_affine=True)"
    assert repr(nn.BatchNorm2d(4)) == "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)"
