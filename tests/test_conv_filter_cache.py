"""The CPU convolution keeps its filters rearranged between calls (csrc/cpu/conv_pack_cache.h).
Filters read from memory bessemer never handed out are found again by (storage, version) without
comparing bytes, so every way of changing a tensor's values must show in the next convolution:
each in-place write bessemer offers, and each way an address leaves bessemer (after which the
bytes are compared). The expected filters are tracked in NumPy on the side: reading the tensor
through numpy() would hand out its address and take the other path."""

import ctypes

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer.testing import assert_close
from harness import DEVICES

F = bm.nn.functional
# Winograd (3x3, stride 1) and the panel kernel (stride 2) keep their own entries.
KWARGS = [dict(padding=1), dict(stride=2, padding=1)]


def torch_conv(x, w, **kw):
    return torch.nn.functional.conv2d(torch.from_numpy(x).double(), torch.from_numpy(w).double(), **kw).numpy()


def _sgd(w, w_np):
    p = bm.nn.Parameter(w)
    p.grad = bm.full(tuple(w.shape), 0.5, device=w.device)
    bm.optim.SGD([p], lr=0.25).step()
    return w_np - 0.125


def _setitem(w, w_np):
    w[3] = 2.0
    w[5:9] = bm.tensor(w_np[5:9] * -1.0, device=w.device)
    out = w_np.copy()
    out[3] = 2.0
    out[5:9] *= -1.0
    return out


def _normal(w, w_np):
    bm.nn.init.normal_(w)
    return np.array(w.tolist(), dtype=np.float32)  # tolist copies: the address stays ours


def _dlpack(w, w_np):
    torch.from_dlpack(w).mul_(-2.0)
    return w_np * -2.0


def _data_ptr(w, w_np):
    new = (w_np * 0.5).astype(np.float32)
    ctypes.memmove(w._data_ptr(), new.ctypes.data, new.nbytes)
    return new


def _numpy_view(w, w_np):
    w.numpy()[...] *= 3.0
    return w_np * 3.0


def _array_protocol(w, w_np):
    np.asarray(w)[0] = 7.0
    out = w_np.copy()
    out[0] = 7.0
    return out


def _buffer(w, w_np):
    np.asarray(memoryview(w))[1] = -7.0
    out = w_np.copy()
    out[1] = -7.0
    return out


# (name, change(w, w_np) -> the new values, devices it applies to)
WRITES = [
    ("mul_", lambda w, n: (w.mul_(1.5), n * np.float32(1.5))[1], None),
    ("copy_", lambda w, n: (w.copy_(bm.tensor(n[::-1].copy(), device=w.device)), n[::-1].copy())[1], None),
    ("fill_", lambda w, n: (w.fill_(0.25), np.full_like(n, 0.25))[1], None),
    ("zero_", lambda w, n: (w.zero_(), np.zeros_like(n))[1], None),
    ("setitem", _setitem, None),
    ("sgd_step", _sgd, None),
    ("init.normal_", _normal, None),
    ("numpy_view", _numpy_view, "cpu"),
    ("__array__", _array_protocol, "cpu"),
    ("buffer", _buffer, "cpu"),
    ("dlpack", _dlpack, "cpu"),
    ("_data_ptr", _data_ptr, "cpu"),
]


# The address-handing paths exist for cpu tensors only (host memory).
CASES = [(d, name, change) for d in DEVICES for name, change, only in WRITES if only in (None, d)]


@pytest.mark.parametrize("kw", KWARGS, ids=["winograd", "panel"])
@pytest.mark.parametrize("device,name,change", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_every_write_to_the_filters_shows_in_the_next_convolution(device, kw, name, change):
    rng = np.random.default_rng(len(name))
    x = rng.standard_normal((1, 16, 12, 12)).astype(np.float32)
    w_np = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
    bx = bm.tensor(x, device=device)
    w = bm.tensor(w_np, device=device)  # a copy: memory bessemer allocated, address not handed out
    for _ in range(2):  # the second call finds the cached filters
        assert_close(F.conv2d(bx, w, **kw), torch_conv(x, w_np, **kw), 2e-5, 5e-5)
    w_np = change(w, w_np)
    assert_close(F.conv2d(bx, w, **kw), torch_conv(x, w_np, **kw), 2e-5, 5e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_load_state_dict_into_a_conv_module_shows_in_the_next_call(device):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 16, 10, 10)).astype(np.float32)
    conv = bm.nn.Conv2d(16, 16, 3, padding=1, bias=False).to(device)
    bx = bm.tensor(x, device=device)
    with bm.no_grad():
        for seed in (1, 2):
            w_np = np.random.default_rng(seed).standard_normal((16, 16, 3, 3)).astype(np.float32)
            conv.load_state_dict({"weight": bm.tensor(w_np)})
            for _ in range(2):
                assert_close(conv(bx), torch_conv(x, w_np, padding=1), 2e-5, 5e-5)
