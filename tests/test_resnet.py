"""ResNet-18 against torch: a torchvision-style ResNet-18 defined here in torch (random weights,
eval mode, non-trivial BatchNorm statistics), saved as safetensors, loaded into bessemer, same
logits on every device; plus the LayerNorm-after-a-transposed-view chain of issue 4."""

import numpy as np
import pytest
import torch
from safetensors.torch import save_file as torch_save_file
from torch_resnet import TorchResNet18

import bessemer as bm
from harness import DEVICES

tnn = torch.nn


@pytest.fixture(scope="module")
def torch_model_file(tmp_path_factory):
    torch.manual_seed(0)
    model = TorchResNet18().eval()
    with torch.no_grad():  # BatchNorm statistics that are not the identity
        for m in model.modules():
            if isinstance(m, tnn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    path = tmp_path_factory.mktemp("resnet") / "resnet18.safetensors"
    torch_save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(path))
    return model, path


def test_state_dict_keys_match_torchvision(torch_model_file):
    model, _ = torch_model_file
    ours = bm.models.resnet18()
    assert list(ours.state_dict().keys()) == list(model.state_dict().keys())
    assert all(tuple(v.shape) == tuple(model.state_dict()[k].shape) for k, v in ours.state_dict().items())


@pytest.mark.parametrize("device", DEVICES)
def test_logits_match_torch(torch_model_file, device):
    model, path = torch_model_file
    # 224x224 on cpu; the simulator runs the Metal shaders on the CPU one thread at a time, so it
    # gets a smaller image through the same network (every layer, every kernel).
    size, batch = (224, 2) if device == "cpu" else (32, 1)
    x = torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = model(x).numpy()
    ours = bm.models.resnet18().eval()
    ours.load_state_dict(bm.load_file(path))
    ours.to(device)
    got = ours(bm.tensor(x.numpy(), device=device)).numpy()
    rel = np.abs(got - want).max() / np.abs(want).max()
    assert rel < 1e-4, f"max relative error {rel:.2e}"


@pytest.mark.parametrize("device", DEVICES)
def test_conv_inputs_on_different_devices_and_moved_models(device):
    other = "cpu" if device != "cpu" else DEVICES[-1]
    conv = bm.nn.Conv2d(3, 4, 3, device=device)
    with pytest.raises(bm.DeviceMismatchError, match=r"\[conv2d\] inputs are on different devices"):
        conv(bm.randn(1, 3, 8, 8, device=other))
    model = bm.models.resnet18(num_classes=10).eval().to(device)
    assert model(bm.randn(1, 3, 32, 32, device=device)).shape == (1, 10)


def _chain(mod_conv, mod_ln, x, lib):
    """Conv2d -> reshape -> transpose -> LayerNorm -> transpose -> reshape (a ViT-style patch path)."""
    y = mod_conv(x)
    n, c, h, w = y.shape
    t = y.reshape(n, c, h * w).transpose(1, 2)  # a transposed view: (n, hw, c) with strides (chw, 1, hw)
    t = mod_ln(t)
    return t.transpose(1, 2).reshape(n, c, h, w)


@pytest.mark.parametrize("device", DEVICES)
def test_layernorm_after_transposed_view_matches_torch(device, tmp_path):
    torch.manual_seed(3)
    tconv, tln = tnn.Conv2d(3, 8, 3, padding=1), tnn.LayerNorm(8)
    with torch.no_grad():
        tln.weight.uniform_(0.5, 1.5)
        tln.bias.uniform_(-0.5, 0.5)
    x = torch.randn(2, 3, 6, 5)
    with torch.no_grad():
        want = _chain(tconv, tln, x, torch).numpy()
    conv, ln = bm.nn.Conv2d(3, 8, 3, padding=1, device=device), bm.nn.LayerNorm(8, device=device)
    conv.load_state_dict({k: bm.tensor(v.numpy()) for k, v in tconv.state_dict().items()})
    ln.load_state_dict({k: bm.tensor(v.numpy()) for k, v in tln.state_dict().items()})
    xb = bm.tensor(x.numpy(), device=device)
    np.testing.assert_allclose(_chain(conv, ln, xb, bm).numpy(), want, rtol=1e-4, atol=1e-5)
    # ... and after a save/load round trip of both layers
    bm.save_file({**{f"conv.{k}": v for k, v in conv.state_dict().items()},
                  **{f"ln.{k}": v for k, v in ln.state_dict().items()}}, tmp_path / "m.safetensors")
    sd = bm.load_file(tmp_path / "m.safetensors", device=device)
    conv2, ln2 = bm.nn.Conv2d(3, 8, 3, padding=1, device=device), bm.nn.LayerNorm(8, device=device)
    conv2.load_state_dict({k[5:]: v for k, v in sd.items() if k.startswith("conv.")})
    ln2.load_state_dict({k[3:]: v for k, v in sd.items() if k.startswith("ln.")})
    np.testing.assert_array_equal(_chain(conv2, ln2, xb, bm).numpy(), _chain(conv, ln, xb, bm).numpy())
