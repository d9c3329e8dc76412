"""Memory accounting and the memory limit (docs/memory.md) on every device: the stats move with
allocations and frees, the limit raises MemoryError naming the op, the size and the limit and
leaves every tensor that existed before intact, and memory in use returns to where it started
after a model's forward pass and after 10,000 small ops."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import bessemer as bm
import bessemer.nn.functional as F
from bessemer import _core
from harness import DEVICES

MiB = 1 << 20
KEYS = {
    "allocated_bytes.current", "allocated_bytes.peak", "requested_bytes.current", "requested_bytes.peak",
    "cached_bytes.current", "reserved_bytes.current", "reserved_bytes.peak", "num_allocs", "num_frees",
    "num_cache_hits", "num_alloc_retries", "num_ooms", "limit_bytes",
}


@pytest.fixture(autouse=True)
def _no_limit_left_behind_and_no_gc():
    # Python's cycle collector may free other tests' tensors at any moment, which would move the
    # numbers these tests compare: collect now, and not while a test runs.
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        for d in DEVICES:
            bm.set_memory_limit(d, None)


def _in_use(dev: str) -> int:
    bm.synchronize(dev)
    return bm.memory_stats(dev)["allocated_bytes.current"]


def _snapshot(tensors: dict) -> dict:
    return {k: t.numpy().copy() for k, t in tensors.items()}


def _assert_intact(tensors: dict, saved: dict) -> None:
    for k, t in tensors.items():
        np.testing.assert_array_equal(t.numpy(), saved[k], err_msg=f"{k} changed")


# ---- the stats ----

@pytest.mark.parametrize("dev", DEVICES)
def test_stats_keys_and_device_arguments(dev):
    s = bm.memory_stats(dev)
    assert set(s) == KEYS
    assert all(isinstance(v, int) and v >= 0 for v in s.values())
    assert s["reserved_bytes.current"] == s["allocated_bytes.current"] + s["cached_bytes.current"]
    assert bm.memory_stats(bm.device(dev)).keys() == s.keys()
    assert bm.memory_stats().keys() == s.keys()  # the default device
    assert bm.memory_allocated(dev) == bm.memory_stats(dev)["allocated_bytes.current"]


# 3 MiB: a large block; 192 KiB: a medium one (batch-1 activations, packing scratch), which the
# cpu allocator once handed back to the system on every free.
@pytest.mark.parametrize("nbytes", [3 * MiB, 192 * 1024], ids=["3MiB", "192KiB"])
@pytest.mark.parametrize("dev", DEVICES)
def test_stats_move_with_allocations_and_frees(dev, nbytes):
    before = _in_use(dev)
    s0 = bm.memory_stats(dev)
    t = bm.empty(nbytes // 4, dtype=bm.float32, device=dev)
    s1 = bm.memory_stats(dev)
    assert s1["requested_bytes.current"] - s0["requested_bytes.current"] == nbytes
    grew = s1["allocated_bytes.current"] - before
    assert nbytes <= grew <= 2 * nbytes  # the block, rounded up by the allocator
    assert s1["num_allocs"] == s0["num_allocs"] + 1
    assert s1["allocated_bytes.peak"] >= s1["allocated_bytes.current"]
    del t
    s2 = bm.memory_stats(dev)
    assert s2["allocated_bytes.current"] == before
    assert s2["num_frees"] == s1["num_frees"] + 1
    assert s2["cached_bytes.current"] == s1["cached_bytes.current"] + grew  # kept for reuse
    t = bm.empty(nbytes // 4, dtype=bm.float32, device=dev)  # the same size again: from the cache
    s3 = bm.memory_stats(dev)
    assert s3["num_cache_hits"] >= s2["num_cache_hits"] + 1
    assert s3["cached_bytes.current"] == s2["cached_bytes.current"] - grew
    del t


@pytest.mark.parametrize("dev", DEVICES)
def test_peak_and_reset(dev):
    base = _in_use(dev)
    bm.reset_peak_memory_stats(dev)
    assert bm.max_memory_allocated(dev) == base
    t = bm.zeros(MiB, dtype=bm.float32, device=dev)  # 4 MiB
    del t
    assert bm.max_memory_allocated(dev) >= base + 4 * MiB
    assert bm.memory_allocated(dev) == base
    bm.reset_peak_memory_stats(dev)
    s = bm.memory_stats(dev)
    assert s["allocated_bytes.peak"] == s["allocated_bytes.current"] == base
    assert s["requested_bytes.peak"] == s["requested_bytes.current"]
    assert s["reserved_bytes.peak"] == s["reserved_bytes.current"]


@pytest.mark.parametrize("dev", DEVICES)
def test_empty_cache_drops_cached_bytes(dev):
    keep = bm.ones(10, device=dev)
    t = bm.zeros(MiB, device=dev)
    u = bm.zeros(7, device=dev)
    del t, u
    assert bm.memory_stats(dev)["cached_bytes.current"] > 0
    bm.empty_cache(dev)
    s = bm.memory_stats(dev)
    assert s["cached_bytes.current"] == 0
    assert s["reserved_bytes.current"] == s["allocated_bytes.current"]
    assert keep.numpy().tolist() == [1.0] * 10  # live tensors untouched


def test_numpy_memory_is_not_counted():
    a = np.arange(MiB, dtype=np.float32)
    before = _in_use("cpu")
    v = bm.from_numpy(a)  # zero-copy: NumPy's memory, not the allocator's
    assert _in_use("cpu") == before
    c = bm.tensor(a)  # a copy: the allocator's
    assert _in_use("cpu") >= before + 4 * MiB
    del v, c


def test_kernel_scratch_is_counted():
    # The cpu conv's unfolded columns come from the allocator too: the peak during conv2d passes
    # what its inputs and output hold.
    x = bm.rand(1, 8, 64, 64)
    w = bm.rand(8, 8, 3, 3)
    base = _in_use("cpu")
    bm.reset_peak_memory_stats("cpu")
    y = F.conv2d(x, w, padding=1)
    out_bytes = y.numel() * 4
    assert bm.max_memory_allocated("cpu") > base + out_bytes
    del y


# ---- the limit ----

@pytest.mark.parametrize("dev", DEVICES)
def test_limit_raises_names_op_size_and_limit_then_raising_it_succeeds(dev):
    a = bm.rand(256, 512, device=dev)
    b = bm.rand(512, 1024, device=dev)
    view = a[1::2, 3:]
    tensors = {"a": a, "b": b, "view": view}
    saved = _snapshot(tensors)
    in_use = _in_use(dev)
    limit = in_use + MiB // 2  # the product needs 1 MiB
    ooms = bm.memory_stats(dev)["num_ooms"]
    assert bm.set_memory_limit(dev, limit) is None
    with pytest.raises(MemoryError) as e:
        bm.matmul(a, b)
    msg = str(e.value)
    assert msg.startswith("[matmul] out of memory on " + str(bm.device(dev)))
    assert f"({MiB} bytes" in msg and "1.00 MiB" in msg
    assert "the limit is" in msg and f"({limit} bytes, bm.set_memory_limit)" in msg
    assert bm.memory_stats(dev)["num_ooms"] == ooms + 1
    assert bm.memory_stats(dev)["cached_bytes.current"] == 0  # the cache was given back first
    assert bm.memory_stats(dev)["allocated_bytes.current"] == in_use  # nothing half-allocated stays
    _assert_intact(tensors, saved)
    assert bm.set_memory_limit(dev, in_use + 2 * MiB) == limit
    c = bm.matmul(a, b)
    np.testing.assert_allclose(c.numpy(), saved["a"] @ saved["b"], rtol=1e-4, atol=1e-4)
    assert bm.get_memory_limit(dev) == in_use + 2 * MiB
    assert bm.set_memory_limit(dev, 0) == in_use + 2 * MiB
    assert bm.get_memory_limit(dev) is None


def test_limit_control_without_limit_the_same_call_succeeds():
    # Control for the test above: the MemoryError comes from the limit, not from the call itself.
    a, b = bm.rand(256, 512), bm.rand(512, 1024)
    assert bm.matmul(a, b).shape == (256, 1024)


@pytest.mark.parametrize("dev", DEVICES)
def test_limit_names_the_op_the_user_called(dev):
    x = bm.rand(2, 4, 16, 16, device=dev)
    w = bm.rand(8, 4, 3, 3, device=dev)
    i = bm.tensor([0, 1, 1], device=dev)
    bm.set_memory_limit(dev, 1)  # every allocation fails, whatever else frees meanwhile
    cases = {
        "conv2d": lambda: F.conv2d(x, w, padding=1),
        "max_pool2d": lambda: F.max_pool2d(x, 2),
        "cat": lambda: bm.cat([x, x]),
        "full": lambda: bm.full((64, 64), 1.0, device=dev),
        "empty": lambda: bm.rand(64, 64, device=dev),
        "contiguous": lambda: x.transpose(0, 3).contiguous(),
        "index": lambda: x[i],
        "tensor": lambda: bm.tensor(np.ones((64, 64), np.float32), device=dev),
        "layer_norm": lambda: F.layer_norm(x, (16,)),
        "exp": lambda: bm.exp(x),
    }
    for op, call in cases.items():
        try:
            call()
        except MemoryError as e:
            assert str(e).startswith(f"[{op}] out of memory on "), str(e)
        else:
            pytest.fail(f"{op}: no MemoryError")


@pytest.mark.parametrize("dev", DEVICES)
def test_limit_in_backward_names_backward(dev):
    w = bm.rand(64, 64, device=dev).requires_grad_()
    loss = (w @ w).relu().sum()
    bm.set_memory_limit(dev, 1)  # every allocation fails, whatever else frees meanwhile
    with pytest.raises(MemoryError, match=r"^\[backward\] out of memory on "):
        loss.backward(retain_graph=True)
    assert w.grad is None
    bm.set_memory_limit(dev, None)
    loss.backward()
    assert w.grad.shape == (64, 64)


@pytest.mark.parametrize("dev", [d for d in DEVICES if d != "cpu"])
def test_limit_on_the_destination_of_a_copy(dev):
    x = bm.rand(64, 64)
    bm.set_memory_limit(dev, 1)
    with pytest.raises(MemoryError, match=rf"^\[to\] out of memory on {dev}"):
        x.to(dev)
    bm.set_memory_limit(dev, None)
    np.testing.assert_array_equal(x.to(dev).numpy(), x.numpy())


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("case", ["add_cast", "copy_cast", "setitem", "setitem_split", "clamp_", "batch_norm",
                                  "sgd", "sgd_first", "adam", "index_add", "matmul", "conv2d"])
def test_every_failure_point_leaves_existing_tensors_intact(dev, case):
    # Sweep the limit upward from what is in use: each call either succeeds or raises MemoryError
    # with every tensor that existed before as it was. Tiny tensors, so the sweep meets every
    # allocation the op makes.
    rng = np.random.default_rng(0)

    def t(*shape, dtype=np.float32):
        return bm.tensor(rng.standard_normal(shape).astype(dtype), device=dev)

    x, y = t(4, 3, 5, 5), t(4, 3, 5, 5)
    yi = bm.tensor(rng.integers(-3, 3, (4, 3, 5, 5)).astype(np.int32), device=dev)
    rm, rv = t(3), bm.tensor(np.abs(rng.standard_normal(3)).astype(np.float32), device=dev)
    wt, bs = t(3), t(3)
    p, g, buf = t(6, 7), t(6, 7), t(6, 7)
    m1, m2 = t(6, 7), bm.tensor(np.abs(rng.standard_normal((6, 7))).astype(np.float32), device=dev)
    step = bm.zeros((), dtype=bm.float32)
    idx = bm.tensor([2, 0, 2], device=dev)
    tensors = {"x": x, "y": y, "yi": yi, "rm": rm, "rv": rv, "wt": wt, "bs": bs, "p": p, "g": g, "buf": buf,
               "m1": m1, "m2": m2, "step": step}
    calls = {
        "add_cast": lambda: x.add_(yi),
        "copy_cast": lambda: x.copy_(yi),
        "setitem": lambda: x.__setitem__(idx, y[:3]),
        # advanced indices apart: written through a contiguous copy, then copied back
        "setitem_split": lambda: x.__setitem__((idx, slice(None), idx), y[:3, :, 0]),
        "clamp_": lambda: x[:, 1].clamp_(-0.5, 0.5),
        "batch_norm": lambda: F.batch_norm(x, rm, rv, wt, bs, training=True, momentum=0.3),
        "sgd": lambda: _core._sgd_step_(p, g, buf, 0.1, 0.9, 0.0, 0.01, False, False),
        "sgd_first": lambda: _core._sgd_step_(p, g, None, 0.1, 0.9, 0.0, 0.01, False, False),  # makes its buffer
        "adam": lambda: _core._adam_step_(p, g, m1, m2, None, step, 1e-3, 0.9, 0.999, 1e-8, 0.0, False, False,
                                          True),
        "index_add": lambda: bm.index_add(x, 0, idx, y[:3]),
        "matmul": lambda: bm.matmul(x, y.transpose(2, 3)),
        "conv2d": lambda: F.conv2d(x, y[:2], wt[:2], padding=1),
    }
    call = calls[case]
    saved = _snapshot(tensors)
    base = _in_use(dev)
    bm.set_memory_limit(dev, base + 1)
    failures = 0
    for extra in range(0, 64 * 1024, 64):
        bm.set_memory_limit(dev, base + extra + 1)
        try:
            call()
        except MemoryError as e:
            assert " out of memory on " in str(e)
            failures += 1
            _assert_intact(tensors, saved)
            assert _in_use(dev) == base, "a failed call left memory allocated"
            continue
        break
    else:
        pytest.fail("the call never succeeded under a 64 KiB margin")
    bm.set_memory_limit(dev, None)
    if case not in ("sgd", "adam", "copy_cast", "clamp_"):  # these write in place and need no memory of their own
        assert failures > 0, "the sweep never reached a failure: the test would prove nothing"


def test_intact_check_control():
    # Control: the comparison used above fails when a tensor did change.
    x = bm.zeros(3)
    saved = _snapshot({"x": x})
    x.add_(1)
    with pytest.raises(AssertionError):
        _assert_intact({"x": x}, saved)


@pytest.mark.parametrize("dev", DEVICES)
def test_limit_counts_allocated_and_frees_cache_first(dev):
    # Cached blocks do not count against the limit: when a request would pass it with them, the
    # cache is given back first and the request is served.
    t = bm.zeros(2 * MiB // 4, device=dev)
    del t
    s = bm.memory_stats(dev)
    assert s["cached_bytes.current"] >= 2 * MiB
    bm.set_memory_limit(dev, s["allocated_bytes.current"] + MiB + 4096)
    retries = s["num_alloc_retries"]
    u = bm.zeros(MiB // 4 - 1, device=dev)  # not the cached size: a fresh block
    s2 = bm.memory_stats(dev)
    assert s2["num_alloc_retries"] == retries + 1
    assert s2["reserved_bytes.current"] <= s2["limit_bytes"]
    del u


# ---- arguments ----

def test_bad_arguments():
    with pytest.raises(ValueError, match=r"\[set_memory_limit\] nbytes must be non-negative"):
        bm.set_memory_limit("cpu", -1)
    with pytest.raises(TypeError, match=r"\[set_memory_limit\] nbytes must be an int"):
        bm.set_memory_limit("cpu", 1.5)
    with pytest.raises(TypeError, match=r"\[set_memory_limit\] nbytes must be an int"):
        bm.set_memory_limit("cpu", True)
    with pytest.raises(ValueError, match="too large"):
        bm.set_memory_limit("cpu", 1 << 70)
    with pytest.raises(Exception, match="nope"):
        bm.memory_stats("nope")
    assert bm.get_memory_limit("cpu") is None


# ---- memory in use returns to where it started ----

def _small_cnn(dev):
    nn = bm.nn
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10),
    ).to(dev).eval()


@pytest.mark.parametrize("dev", DEVICES)
def test_forward_pass_returns_memory(dev):
    if dev == "cpu":
        model, x = bm.models.resnet18(num_classes=10).eval(), bm.rand(2, 3, 32, 32)
    else:  # the simulator runs shaders lane by lane: a small conv net
        model, x = _small_cnn(dev), bm.rand(2, 3, 8, 8, device=dev)
    with bm.no_grad():
        model(x)  # a first pass: anything created once (lazy state) exists before counting
        start = _in_use(dev)
        bm.reset_peak_memory_stats(dev)
        out = model(x)
        assert out.shape == (2, 10)
        del out
    assert bm.max_memory_allocated(dev) > start  # the pass did allocate
    assert _in_use(dev) == start


@pytest.mark.parametrize("dev", DEVICES)
def test_ten_thousand_small_ops_return_memory(dev):
    a = bm.rand(4, 4, device=dev)
    b = bm.rand(4, device=dev)
    start = _in_use(dev)
    allocs = bm.memory_stats(dev)["num_allocs"]
    x = a
    for _ in range(2500):  # four ops a round
        x = ((x * 0.5 + b) - a).relu()
    del x
    assert _in_use(dev) == start
    assert bm.memory_stats(dev)["num_allocs"] - allocs >= 10_000


def test_leak_check_control():
    # Control: a tensor kept alive shows up as memory that did not return.
    start = _in_use("cpu")
    kept = [bm.rand(4, 4) + 1]
    assert _in_use("cpu") != start
    del kept
