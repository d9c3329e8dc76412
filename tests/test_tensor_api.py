"""Factories, conversions and the Python-facing API with torch's meanings."""

import pickle

import numpy as np
import pytest
import torch

import bessemer as bm
from harness import DEVICES


def test_dtypes_and_devices_are_interned():
    assert bm.device("cpu") is bm.device("cpu")
    assert bm.zeros(2).device is bm.device("cpu")
    assert bm.zeros(2).dtype is bm.float32
    assert str(bm.device("cpu")) == "cpu" and bm.device("cpu").type == "cpu" and bm.device("cpu").index is None
    assert bm.device("cpu") in bm.available_devices()
    assert repr(bm.float16) == "bessemer.float16"
    assert pickle.loads(pickle.dumps(bm.bfloat16)) is bm.bfloat16


def test_unavailable_and_unknown_devices():
    names = [str(d) for d in bm.available_devices()]
    if "metal:0" not in names:
        # A build without metal-cpp says so; a macOS build on a machine without a GPU says that.
        why = "no Metal runtime" if "simulator only" in bm._core.build_info()["metal"] else "found no GPU"
        with pytest.raises(RuntimeError, match=rf"(?s){why}.*Available devices: cpu"):
            bm.device("metal")
    else:
        with pytest.raises(RuntimeError, match="only the system's default GPU"):
            bm.device("metal:1")
    with pytest.raises(ValueError, match="unknown device type 'tpu'.*expected cpu, metal, metal-sim or cuda"):
        bm.device("tpu")
    with pytest.raises(ValueError, match="invalid device string"):
        bm.device("cpu:x")


@pytest.mark.parametrize("data,torch_dtype", [
    ([1, 2, 3], torch.int64), ([1.0, 2], torch.float32), ([True, False], torch.bool), (3.5, torch.float32),
    (7, torch.int64), ([[1, 2], [3, 4]], torch.int64), (np.arange(3, dtype=np.int32), torch.int32),
    (np.ones(2, dtype=np.float64), torch.float64), (np.ones(2, dtype=np.float16), torch.float16),
])
def test_tensor_infers_dtype_like_torch(data, torch_dtype):
    t = bm.tensor(data)
    ref = torch.tensor(data)
    assert t.dtype.name == str(ref.dtype).replace("torch.", "")
    np.testing.assert_array_equal(t.numpy(), ref.numpy())


def test_tensor_errors():
    with pytest.raises(ValueError, match=r"\[tensor\]"):
        bm.tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match=r"\[tensor\]"):
        bm.tensor(["a", "b"])


@pytest.mark.parametrize("device", DEVICES)
def test_factories(device):
    np.testing.assert_array_equal(bm.zeros(2, 3, device=device).numpy(), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(bm.ones((2,), dtype=bm.int32, device=device).numpy(), np.ones(2, np.int32))
    np.testing.assert_array_equal(bm.full((2, 2), 7, device=device).numpy(), np.full((2, 2), 7))
    assert bm.full((2,), 7).dtype == bm.int64 and bm.full((2,), 7.0).dtype == bm.float32
    assert bm.full((2,), True).dtype == bm.bool
    assert bm.empty(3, 4, device=device).shape == (3, 4)
    for args in [(5,), (2, 9), (2, 9, 3), (0, 1, 0.1), (1, -1, -0.25), (10, 0, -3)]:
        np.testing.assert_allclose(bm.arange(*args, device=device).numpy(), torch.arange(*args).numpy(), rtol=1e-6)
        assert bm.arange(*args).dtype.name == str(torch.arange(*args).dtype).replace("torch.", "")
    with pytest.raises(ValueError, match=r"\[arange\]"):
        bm.arange(0, 5, 0)
    with pytest.raises(ValueError, match=r"\[arange\]"):
        bm.arange(5, 0, 1)


def test_negative_and_huge_sizes():
    with pytest.raises(ValueError, match="negative dimension"):
        bm.zeros(-1, 2)
    with pytest.raises(MemoryError):
        bm.empty(2**40, 2**20)
    with pytest.raises(MemoryError):
        bm.zeros(2**62)
    np.testing.assert_array_equal(bm.zeros(3).numpy(), np.zeros(3))  # still usable after the failures


def test_from_numpy_is_zero_copy_and_numpy_shares():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = bm.from_numpy(a)
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    view = t.T.numpy()
    assert view.base is not None and view.strides == (4, 12)
    b = np.asarray(t)
    b[1, 1] = -1  # numpy() shares memory with a cpu tensor, as in torch
    assert a[1, 1] == -1
    s = a[:, ::2]
    ts = bm.from_numpy(s)
    assert ts.stride() == (3, 2)
    np.testing.assert_array_equal(ts.numpy(), s)
    with pytest.raises(ValueError, match="negative strides"):
        bm.from_numpy(a[::-1])
    with pytest.raises(TypeError, match="uint16"):
        bm.from_numpy(np.zeros(3, dtype=np.uint16))
    del a, b
    np.testing.assert_array_equal(t.numpy()[0], [42, 1, 2])  # t keeps the numpy memory alive


def test_buffer_protocol_item_tolist():
    t = bm.tensor([[1.5, 2.5], [3.5, 4.5]])
    m = memoryview(t)
    assert m.format == "f" and m.shape == (2, 2) and m.strides == (8, 4)
    mt = memoryview(t.T)
    assert mt.strides == (4, 8)
    assert t.tolist() == [[1.5, 2.5], [3.5, 4.5]]
    assert t[1, 0].item() == 3.5 and isinstance(bm.tensor(3).item(), int)
    assert bm.tensor([1.0], dtype=bm.bfloat16).item() == 1.0
    assert bm.tensor([1.5, 2], dtype=bm.bfloat16).tolist() == [1.5, 2.0]
    with pytest.raises(ValueError, match=r"\[item\] a tensor with 4 elements"):
        t.item()
    with pytest.raises(TypeError, match="bfloat16 has no NumPy equivalent"):
        bm.tensor([1.0], dtype=bm.bfloat16).numpy()


@pytest.mark.parametrize("device", DEVICES)
def test_to_dtype_and_device(device):
    t = bm.tensor([1.7, -2.2, 0.0])
    assert t.to(bm.float32) is t
    assert t.to(device).device is bm.device(device)
    assert t.to(bm.int32).tolist() == [1, -2, 0]
    assert t.to(bm.bool).tolist() == [True, True, False]
    assert t.to(device, bm.float16).dtype == bm.float16
    np.testing.assert_array_equal(t.to(device).to("cpu").numpy(), t.numpy())
    assert t.to(bm.zeros(1, dtype=bm.int64)).dtype == bm.int64
    np.testing.assert_array_equal(t.to(bm.float64).numpy(), t.numpy().astype(np.float64))
    with pytest.raises(TypeError, match=r"\[to\]"):
        t.to(3)


def test_python_protocols():
    t = bm.tensor([[1, 2], [3, 4]])
    assert len(t) == 2
    assert [r.tolist() for r in t] == [[1, 2], [3, 4]]
    assert bool(bm.tensor([1])) and not bool(bm.tensor(0.0))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(t)
    with pytest.raises(TypeError, match="0-d"):
        len(bm.tensor(1))
    assert float(bm.tensor(2.5)) == 2.5 and int(bm.tensor(3)) == 3
    assert "tensor([[1, 2]" in repr(t)
    assert "dtype=bessemer.float16" in repr(t.to(bm.float16))
    assert {t: 1}[t] == 1  # hashable by identity, as in torch
    assert t.size() == (2, 2) and t.size(-1) == 2 and t.numel() == 4 and t.dim() == 2 and t.element_size() == 8


def test_python_m_bessemer_prints_configuration():
    import subprocess
    import sys
    from importlib import metadata

    out = subprocess.run([sys.executable, "-m", "bessemer"], capture_output=True, text=True, check=True).stdout
    assert f"bessemer {bm.__version__}" in out and "BLAS" in out and "cpu" in out
    assert f"distributed: mpi4py {metadata.version('mpi4py')}, MPICH {metadata.version('mpich')}" in out


def test_set_num_threads_sizes_the_one_pool_that_runs_blas_too():
    # OpenBLAS stays on one thread (0: Accelerate, which does not say); large products are split
    # into row or column blocks across bessemer's pool (cpu/blas.cpp). Each shape below takes one
    # of the split's paths: columns with b transposed, rows with a transposed, and matrix-vector
    # products both ways, checked against float64 NumPy for 1 to 3 threads (uneven blocks).
    before = bm.get_num_threads()
    rng = np.random.default_rng(0)
    cases = [((300, 500), (700, 500), False, True), ((900, 200), (200, 130), True, False),
             ((1, 700), (700, 900), False, False), ((1000, 600), (600, 1), False, False)]
    try:
        for n in (1, 2, 3):
            bm.set_num_threads(n)
            assert bm.get_num_threads() == n and bm._core._blas_threads() in (0, 1)
            for sa, sb, ta, tb in cases:
                a = rng.standard_normal(sa[::-1] if ta else sa, dtype=np.float32)
                b = rng.standard_normal(sb, dtype=np.float32)
                ba, bb = bm.from_numpy(a), bm.from_numpy(b)
                ba, a = (ba.t(), a.T) if ta else (ba, a)
                bb, b = (bb.t(), b.T) if tb else (bb, b)
                want = a.astype(np.float64) @ b.astype(np.float64)
                np.testing.assert_allclose((ba @ bb).numpy(), want, rtol=1e-4, atol=1e-3 * np.sqrt(a.shape[1]))
    finally:
        bm.set_num_threads(before)
    with pytest.raises(ValueError, match=r"\[set_num_threads\]"):
        bm.set_num_threads(0)
