"""Device semantics: interned handles, one ordered queue per device with batched commits, reads that
wait, transfers both ways, and device mismatches that are errors (checked first, even for empty
tensors) rather than wrong answers."""

import os
import subprocess
import sys

import numpy as np
import pytest

import bessemer as bm
from bessemer import _core
from harness import DEVICES

GPUS = [d for d in DEVICES if d != "cpu"]


def test_there_is_a_metal_device_to_test():
    assert "metal-sim:0" in DEVICES  # the simulator is built on every platform


@pytest.mark.parametrize("dev", GPUS)
def test_handles_are_interned(dev):
    kind = dev.split(":")[0]
    assert bm.device(kind) is bm.device(dev) is bm.device(f"{kind}:0")
    assert bm.zeros(1, device=kind).device is bm.device(dev)
    unavailable = rf"\[device\] '{kind}:1' is not available(: [^.]*)?\. Available devices: cpu"
    with pytest.raises(RuntimeError, match=unavailable):
        bm.device(f"{kind}:1")


def test_metal_without_a_gpu_names_the_available_devices():
    if "metal:0" in DEVICES:
        assert bm.device("metal").type == "metal"
        return
    with pytest.raises(RuntimeError, match=r"no Metal runtime.*Available devices: cpu, metal-sim:0"):
        bm.device("metal")


def test_cuda_is_listed_or_says_why_not():
    if "cuda:0" in DEVICES:
        assert bm.device("cuda") is bm.device("cuda:0")
        assert bm.device("cuda").type == "cuda"
        return
    why = "this build has no CUDA target" if "none" in _core.build_info()["cuda"] else "NVIDIA driver"
    with pytest.raises(RuntimeError, match=rf"\[device\] 'cuda' is not available: .*{why}.*Available devices: cpu"):
        bm.device("cuda")
    with pytest.raises(RuntimeError, match=r"\[device\] 'cuda:3' is not available: "):
        bm.device("cuda:3")


def test_cuda_without_a_driver_says_which_library_it_tried():
    """A machine without an NVIDIA driver: the error says what was looked for, in every build."""
    code = (
        "import bessemer as bm\n"
        "assert not any(d.type == 'cuda' for d in bm.available_devices())\n"
        "try:\n    bm.device('cuda')\nexcept RuntimeError as e:\n    print(e)\n"
    )
    here = os.path.dirname(os.path.dirname(bm.__file__))  # the bessemer this suite imported
    path = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, BESSEMER_CUDA_DRIVER="/nonexistent/libcuda.so.1", PYTHONPATH=path)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    if "none" in _core.build_info()["cuda"]:
        assert "this build has no CUDA target" in out.stdout
    else:
        assert "no NVIDIA driver: cannot load /nonexistent/libcuda.so.1" in out.stdout, out.stdout
    assert "Available devices: cpu, metal-sim:0" in out.stdout


@pytest.mark.parametrize("dev", GPUS)
def test_100_chained_adds_make_one_commit(dev):
    x = bm.zeros(1000, device=dev)
    bm.synchronize(dev)
    _core.reset_queue_stats(dev)
    for _ in range(100):
        x = x + 1
    assert _core.queue_stats(dev)["commits"] == 0  # nothing submitted until someone reads
    assert _core.queue_stats(dev)["dispatches"] == 100
    np.testing.assert_array_equal(x.numpy(), np.full(1000, 100, np.float32))
    assert _core.queue_stats(dev)["commits"] == 1


@pytest.mark.parametrize("dev", GPUS)
def test_batch_limit_commits_without_a_read_and_synchronize_drains(dev):
    x = bm.zeros(10, device=dev)
    bm.synchronize()
    _core.reset_queue_stats(dev)
    for _ in range(300):
        x = x + 1
    assert _core.queue_stats(dev)["commits"] == 1  # the batch limit (256) was reached once
    bm.synchronize(dev)
    assert _core.queue_stats(dev)["commits"] == 2
    assert x.tolist() == [300.0] * 10


@pytest.mark.parametrize("dev", GPUS)
@pytest.mark.parametrize("read", ["numpy", "item", "to_cpu", "tolist"])
def test_reads_wait_for_the_producing_work(dev, read):
    x = bm.arange(6, dtype=bm.float32, device=dev).reshape(2, 3)
    y = (x * 2 + 1).sum()  # queued, not yet committed
    got = {"numpy": lambda: y.numpy().item(), "item": y.item, "to_cpu": lambda: y.to("cpu").item(),
           "tolist": y.tolist}[read]()
    assert got == 36.0


@pytest.mark.parametrize("dev", GPUS)
def test_transfers_both_ways_keep_values_and_dtypes(dev):
    for dt in (bm.float32, bm.float16, bm.bfloat16, bm.int32, bm.int64, bm.bool):
        a = bm.tensor([[1, 0, 3], [4, 5, 0]], dtype=dt)
        g = a.T.to(dev)  # a strided view goes over too
        assert g.device is bm.device(dev) and g.dtype is dt
        back = g.to("cpu")
        assert back.device is bm.device("cpu")
        np.testing.assert_array_equal(back.to(bm.float32).numpy(), a.T.to(bm.float32).numpy())
    with pytest.raises(bm.UnsupportedError, match=rf"\[to\] dtype float64 is not supported on device {dev}"):
        bm.zeros(2, dtype=bm.float64).to(dev)
    with pytest.raises(bm.UnsupportedError, match=rf"float64 is not supported on device {dev}"):
        bm.zeros(2, dtype=bm.float64, device=dev)


def _pairs(dev):
    """(name, fn(a, b)) for every multi-input op; a and b are tensors on different devices."""
    return [
        ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
        ("div", lambda a, b: a / b), ("pow", lambda a, b: a ** b), ("maximum", bm.maximum),
        ("minimum", bm.minimum), ("eq", lambda a, b: a == b), ("lt", lambda a, b: a < b),
        ("where", lambda a, b: bm.where(a > 0, a, b)), ("matmul", lambda a, b: a @ b),
        ("cat", lambda a, b: bm.cat([a, b])), ("stack", lambda a, b: bm.stack([a, b])),
        ("linear", lambda a, b: bm.nn.functional.linear(a, b)),
    ]


@pytest.mark.parametrize("dev", GPUS)
@pytest.mark.parametrize("case", range(14))
def test_mixed_devices_are_an_error_checked_first(dev, case):
    name, fn = _pairs(dev)[case]
    # Different dtypes AND incompatible shapes: the device check must win.
    a = bm.ones(2, 3, device="cpu")
    b = bm.ones(5, 7, dtype=bm.int32, device=dev)
    with pytest.raises(bm.DeviceMismatchError, match=rf"\[{name}\] inputs are on "
                                                     rf"different devices: .* on cpu, .* on {dev}"):
        fn(a, b)
    # ... also for empty tensors
    with pytest.raises(bm.DeviceMismatchError):
        fn(bm.ones(0, 3, device="cpu"), bm.ones(0, 3, device=dev))


@pytest.mark.parametrize("dev", GPUS)
def test_two_handles_to_one_device_share_one_queue(dev):
    """The regression that motivated interned devices: model built through one handle, data
    through another; `pred + y` must be the real sum, equal to the CPU result."""
    kind = dev.split(":")[0]
    h1, h2 = bm.device(kind), bm.device(f"{kind}:0")
    bm.manual_seed(0)
    model = bm.nn.Linear(8, 4).to(h1)
    bm.manual_seed(1)
    x = bm.randn(16, 8).to(h2)
    y = bm.randn(16, 4).to(h2)
    pred = model(x)
    got = (pred + y).numpy()
    cpu_model = bm.nn.Linear(8, 4)
    cpu_model.load_state_dict(model.state_dict())
    want = (cpu_model(x.to("cpu")) + y.to("cpu")).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert not np.allclose(got, pred.numpy())  # a + b is not a


def test_synchronize_all_devices():
    xs = [bm.ones(4, device=d) * 3 for d in DEVICES]
    bm.synchronize()
    for d in GPUS:
        before = _core.queue_stats(d)["commits"]
        bm.synchronize(d)
        assert _core.queue_stats(d)["commits"] == before  # nothing was left to commit
    assert all(x.tolist() == [3.0] * 4 for x in xs)
