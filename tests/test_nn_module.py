"""nn.Module infrastructure and Linear: registration, state_dict, load_state_dict errors, to(), modes,
torch's initialisation bounds, and forward against NumPy on every device."""

import math

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer import nn
from harness import DEVICES


class Net(nn.Module):
    def __init__(self, device=None):
        super().__init__()
        self.fc1 = nn.Linear(4, 8, device=device)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 3, bias=False, device=device)
        self.register_buffer("steps", bm.zeros(1, dtype=bm.int64, device=device))
        self.register_buffer("scratch", bm.zeros(2, device=device), persistent=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def test_registration_and_state_dict_keys():
    n = Net()
    assert [k for k, _ in n.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight"]
    assert list(n.state_dict()) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight"]  # own tensors first, as torch
    assert [k for k, _ in n.named_buffers()] == ["steps", "scratch"]
    assert len(list(n.modules())) == 4 and [k for k, _ in n.named_children()] == ["fc1", "act", "fc2"]
    assert isinstance(n.fc1.weight, nn.Parameter) and isinstance(n.fc1.weight, bm.Tensor)
    n.steps = bm.ones(1, dtype=bm.int64)  # assigning to a buffer name updates the buffer
    assert n.state_dict()["steps"].tolist() == [1]
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert isinstance(seq[0], nn.Linear) and len(seq) == 3


def test_load_state_dict_roundtrip_and_errors():
    a, b = Net(), Net()
    b.load_state_dict(a.state_dict())
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert ka == kb
        np.testing.assert_array_equal(va.numpy(), vb.numpy())
    sd = dict(a.state_dict())
    before = b.fc1.weight.numpy().copy()
    bad = dict(sd)
    bad["fc1.weight"] = bm.zeros(3, 3)
    del bad["fc2.weight"]
    bad["extra"] = bm.zeros(1)
    with pytest.raises(ValueError, match=r"(?s)\[load_state_dict\].*'fc1.weight': checkpoint shape \(3, 3\), "
                                         r"model shape \(8, 4\).*missing keys: fc2.weight.*unexpected keys: extra"):
        b.load_state_dict(bad)
    np.testing.assert_array_equal(b.fc1.weight.numpy(), before)  # nothing modified on failure
    partial = {k: v for k, v in sd.items() if k != "fc2.weight"}
    missing, unexpected = b.load_state_dict(partial, strict=False)
    assert missing == ["fc2.weight"] and unexpected == []


@pytest.mark.parametrize("device", DEVICES)
def test_to_moves_everything_and_forward_matches_numpy(device):
    n = Net().to(device)
    assert all(str(t.device) == device for t in list(n.parameters()) + list(n.buffers()))
    assert all(isinstance(p, nn.Parameter) for p in n.parameters())
    x = bm.randn(5, 4, device=device)
    y = n(x).numpy()
    w1, b1, w2 = (t.to("cpu").numpy().astype(np.float64) for t in (n.fc1.weight, n.fc1.bias, n.fc2.weight))
    ref = np.maximum(x.numpy() @ w1.T + b1, 0) @ w2.T
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
    h = Net().to(device).to(bm.float16)
    assert h.fc1.weight.dtype == bm.float16 and h.steps.dtype == bm.int64  # ints keep their dtype


def test_train_eval_flags():
    n = Net()
    assert n.training and n.fc1.training
    n.eval()
    assert not n.training and not n.fc1.training
    n.train()
    assert n.fc2.training


@pytest.mark.parametrize("device", DEVICES)
def test_linear_init_follows_torch_bounds_and_differs_between_layers(device):
    a, b = nn.Linear(1, 1, device=device), nn.Linear(1, 1, device=device)
    assert a.weight.item() != b.weight.item() and a.bias.item() != b.bias.item()
    big = nn.Linear(400, 300, device=device)
    w = big.weight.numpy()
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound


def test_init_functions():
    t = bm.empty(64, 32)
    nn.init.xavier_uniform_(t)
    assert np.abs(t.numpy()).max() <= math.sqrt(6 / 96)
    nn.init.zeros_(t)
    assert not t.numpy().any()
    nn.init.ones_(t)
    assert (t.numpy() == 1).all()
    nn.init.kaiming_uniform_(t, nonlinearity="relu")
    assert np.abs(t.numpy()).max() <= math.sqrt(2) * math.sqrt(3 / 32)
    with pytest.raises(ValueError, match="fewer than 2 dims"):
        nn.init.kaiming_uniform_(bm.empty(3))
    g = bm.Generator("cpu").manual_seed(3)
    u = nn.init.normal_(bm.empty(4), generator=g).numpy()
    g.manual_seed(3)
    np.testing.assert_array_equal(nn.init.normal_(bm.empty(4), generator=g).numpy(), u)


def test_replacing_a_submodule_keeps_its_place_like_torch():
    ours = bm.nn.Sequential(bm.nn.Linear(2, 3), bm.nn.ReLU(), bm.nn.Linear(3, 1))
    theirs = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1))
    ours[0] = bm.nn.Linear(2, 3)
    setattr(ours, "1", bm.nn.GELU())
    theirs[0] = torch.nn.Linear(2, 3)
    setattr(theirs, "1", torch.nn.GELU())
    assert [type(m).__name__ for m in ours] == [type(m).__name__ for m in theirs] == ["Linear", "GELU", "Linear"]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours(bm.ones(4, 2)).shape == (4, 1)
