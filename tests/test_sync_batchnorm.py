"""SyncBatchNorm in one process (no process group: BatchNorm over dim 1) against torch's BatchNorm1d/2d/3d,
on every device and input layout; convert_sync_batchnorm; its errors. Across processes:
tests/test_distributed.py (tests/distributed/syncbn.py)."""

import numpy as np
import pytest
import torch

import bessemer as bm
from harness import DEVICES

TORCH_BN = {2: torch.nn.BatchNorm1d, 3: torch.nn.BatchNorm1d, 4: torch.nn.BatchNorm2d, 5: torch.nn.BatchNorm3d}


def _view(x: np.ndarray, layout: str, lib, device=None):
    """x as a tensor of `lib` with the given layout (same logical values)."""
    make = (lambda a: bm.tensor(a, device=device)) if lib is bm else torch.tensor
    if layout == "transposed":  # C and the last dim swapped in memory
        return make(np.ascontiguousarray(np.swapaxes(x, 1, -1))).transpose(1, -1)
    if layout == "sliced":
        big = np.zeros(tuple(2 * s for s in x.shape), np.float32)
        big[tuple(slice(None, None, 2) for _ in x.shape)] = x
        return make(big)[tuple(slice(None, None, 2) for _ in x.shape)]
    return make(x)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("shape,kw", [((6, 3), {}), ((4, 3, 5), {"momentum": None}), ((2, 3, 4, 5), {}),
                                      ((3, 3, 2, 2, 3), {"affine": False}),
                                      ((4, 3, 5), {"track_running_stats": False})])
@pytest.mark.parametrize("device", DEVICES)
def test_one_process_is_batchnorm_like_torch(device, shape, kw, layout):
    rng = np.random.default_rng(len(shape))
    ours, theirs = bm.nn.SyncBatchNorm(3, **kw).to(device), TORCH_BN[len(shape)](3, **kw)
    if ours.weight is not None:
        w = rng.uniform(0.5, 2, 3).astype(np.float32)
        with bm.no_grad():
            ours.weight.copy_(bm.tensor(w, device=device))
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(w))
    for _ in range(3):  # three training steps: the running statistics move
        x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        xb, xt = _view(x, layout, bm, device).requires_grad_(), _view(x, layout, torch).requires_grad_()
        yb, yt = ours(xb), theirs(xt)
        yb.backward(bm.tensor(g, device=device))
        yt.backward(torch.tensor(g))
        np.testing.assert_allclose(yb.detach().to("cpu").numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(xb.grad.to("cpu").numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
    for name, t in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[name].to("cpu").numpy(), t.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    if ours.weight is not None:
        np.testing.assert_allclose(ours.weight.grad.to("cpu").numpy(), theirs.weight.grad.numpy(), rtol=1e-4,
                                   atol=1e-5)
        np.testing.assert_allclose(ours.bias.grad.to("cpu").numpy(), theirs.bias.grad.numpy(), rtol=1e-4, atol=1e-5)
    ours.eval()
    theirs.eval()
    x = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(ours(_view(x, layout, bm, device)).to("cpu").numpy(),
                               theirs(_view(x, layout, torch)).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_convert_keeps_the_tensors_the_order_and_the_mode():
    net = bm.nn.Sequential(bm.nn.Conv2d(1, 2, 3), bm.nn.BatchNorm2d(2), bm.nn.ReLU(),
                           bm.nn.Sequential(bm.nn.BatchNorm2d(2, momentum=None)))
    net[1].eval()
    weight, mean = net[1].weight, net[1].running_mean
    converted = bm.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert converted is net
    assert [type(m).__name__ for m in net] == ["Conv2d", "SyncBatchNorm", "ReLU", "Sequential"]
    assert type(net[3][0]) is bm.nn.SyncBatchNorm and net[3][0].momentum is None
    assert net[1].weight is weight and net[1].running_mean is mean and not net[1].training
    assert list(net.state_dict()) == list(bm.nn.Sequential(bm.nn.Conv2d(1, 2, 3), bm.nn.BatchNorm2d(2), bm.nn.ReLU(),
                                                           bm.nn.Sequential(bm.nn.BatchNorm2d(2))).state_dict())


def test_errors_name_the_layer_and_change_nothing():
    bn = bm.nn.SyncBatchNorm(3)
    with pytest.raises(ValueError, match=r"\[SyncBatchNorm\] expected at least 2D input \(got 1D input\)"):
        bn(bm.ones(3))
    with pytest.raises(ValueError, match=r"\[SyncBatchNorm\] expected 3 channels in dim 1, got .* \[2, 4\]"):
        bn(bm.ones(2, 4))
    with pytest.raises(ValueError, match=r"\[SyncBatchNorm\] expected more than 1 value per channel"):
        bn(bm.ones(1, 3))
    assert bn.num_batches_tracked.item() == 0
    np.testing.assert_array_equal(bn.running_mean.numpy(), np.zeros(3))
