"""DLPack both ways: np.from_dlpack(t) / torch.from_dlpack(t) share a cpu tensor's memory, and
bm.from_dlpack(x) shares the memory of NumPy arrays and torch tensors, in every layout the harness
makes; what cannot be shared is refused with a message naming the op (or copied, where the
protocol's copy= allows it)."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import bessemer as bm
from harness import DEVICES, LAYOUTS, make_input

rng = np.random.default_rng(7)
CPU_DTYPES = [bm.float32, bm.float16, bm.float64, bm.int32, bm.int64, bm.bool]  # NumPy has no bfloat16
TORCH_OF = {bm.float32: torch.float32, bm.float16: torch.float16, bm.bfloat16: torch.bfloat16,
            bm.float64: torch.float64, bm.int32: torch.int32, bm.int64: torch.int64, bm.bool: torch.bool}
NP_DTYPES = [np.float32, np.float16, np.float64, np.int32, np.int64, np.bool_]


def _values(t: bm.Tensor) -> np.ndarray:
    return (t.to(bm.float32) if t.dtype == bm.bfloat16 else t).numpy()


def _capsule_name(cap) -> str:
    return repr(cap).split('"')[1]


# ---------------------------------------------------------------------------------------- export


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", CPU_DTYPES, ids=str)
def test_numpy_from_dlpack_shares_every_layout(dtype, layout):
    t, ref = make_input((3, 4), dtype, "cpu", layout, rng)
    a = np.from_dlpack(t)
    assert a.shape == tuple(t.shape)
    np.testing.assert_array_equal(a, t.numpy())
    np.testing.assert_array_equal(a, ref.astype(a.dtype))
    if t.numel():
        assert a.__array_interface__["data"][0] == t._data_ptr()  # the same memory, not a copy
        assert [s // a.itemsize for s in a.strides] == list(t.stride())


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", CPU_DTYPES + [bm.bfloat16], ids=str)
def test_torch_from_dlpack_shares_every_layout(dtype, layout):
    t, _ = make_input((3, 4), dtype, "cpu", layout, rng)
    tt = torch.from_dlpack(t)
    assert tt.dtype == TORCH_OF[dtype] and tuple(tt.shape) == tuple(t.shape)
    np.testing.assert_array_equal((tt.float() if dtype == bm.bfloat16 else tt).numpy(), _values(t))
    if t.numel():
        assert tt.data_ptr() == t._data_ptr() and list(tt.stride()) == list(t.stride())


def test_writes_through_the_consumer_are_seen():
    t = bm.zeros(2, 3)
    np.from_dlpack(t)[1, 2] = 5.0
    torch.from_dlpack(t)[0, 0] = -1.0
    np.testing.assert_array_equal(t.numpy(), [[-1, 0, 0], [0, 0, 5]])


def test_capsules_legacy_and_versioned():
    t = bm.arange(6, dtype=bm.float32).reshape(2, 3)
    assert _capsule_name(t.__dlpack__()) == "dltensor"  # no max_version: the legacy struct
    assert _capsule_name(t.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert _capsule_name(t.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert t.__dlpack_device__() == (1, 0)
    tt = torch.utils.dlpack.from_dlpack(t.__dlpack__())
    np.testing.assert_array_equal(tt.numpy(), t.numpy())


def test_the_capsule_keeps_the_tensor_alive_and_unconsumed_capsules_free_it():
    gc.collect()
    before = bm._core._live_storages()
    t = bm.arange(1000, dtype=bm.float32)
    cap = t.__dlpack__(max_version=(1, 0))
    del t
    gc.collect()
    a = np.from_dlpack(_Holder(cap))  # the tensor is gone; its memory lives with the capsule
    np.testing.assert_array_equal(a, np.arange(1000, dtype=np.float32))
    del a, cap
    gc.collect()
    for _ in range(3):
        cap = bm.ones(10).__dlpack__()  # never consumed
        del cap
    gc.collect()
    assert bm._core._live_storages() == before


class _Holder:
    """A producer handing out one prepared capsule (to consume a capsule with np.from_dlpack)."""

    def __init__(self, cap):
        self.cap = cap

    def __dlpack__(self, **kwargs):
        return self.cap

    def __dlpack_device__(self):
        return (1, 0)


def test_copy_true_exports_a_copy():
    t = bm.zeros(3)
    a = np.from_dlpack(t, copy=True)
    a[0] = 1
    assert t.numpy()[0] == 0


def test_read_only_tensor_exports_read_only_or_a_copy():
    src = np.arange(4, dtype=np.float32)
    src.flags.writeable = False
    t = bm.from_numpy(src)
    a = np.from_dlpack(t)  # NumPy asks for the versioned struct: the read-only flag travels
    assert not a.flags.writeable
    np.testing.assert_array_equal(a, src)
    legacy = torch.utils.dlpack.from_dlpack(t.__dlpack__())  # the legacy struct cannot say read-only: a copy
    legacy[0] = 9
    assert src[0] == 0 and t.numpy()[0] == 0
    with pytest.raises(BufferError, match=r"^\[__dlpack__\] the tensor is read-only"):
        t.__dlpack__(copy=False)


def test_requires_grad_is_refused():
    w = bm.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^\[__dlpack__\] cannot export a tensor that requires grad"):
        np.from_dlpack(w)
    np.testing.assert_array_equal(np.from_dlpack(w.detach()), np.ones(3, np.float32))


def test_stream_must_be_none_on_cpu():
    with pytest.raises(ValueError, match=r"^\[__dlpack__\] stream must be None"):
        bm.ones(2).__dlpack__(stream=1)


@pytest.mark.parametrize("device", [d for d in DEVICES if d != "cpu"])
def test_other_devices_refuse_or_copy(device):
    t = bm.arange(6, dtype=bm.float32, device=device).reshape(2, 3)
    assert t.__dlpack_device__()[0] != 1
    with pytest.raises(BufferError, match=rf"^\[__dlpack__\] the tensor is on {device}"):
        np.from_dlpack(t)
    with pytest.raises(BufferError, match=r"^\[__dlpack__\] the tensor is on"):
        t.__dlpack__(dl_device=(1, 0), copy=False)
    a = np.from_dlpack(t, device="cpu")  # NumPy passes dl_device=(1, 0): a copy is allowed
    np.testing.assert_array_equal(a, t.to("cpu").numpy())
    tt = torch.utils.dlpack.from_dlpack(t.__dlpack__(dl_device=(1, 0)))
    np.testing.assert_array_equal(tt.numpy(), t.to("cpu").numpy())


def test_unsupported_dl_device():
    with pytest.raises(BufferError, match=r"^\[__dlpack__\] dl_device \(2, 0\) is not supported"):
        bm.ones(2).__dlpack__(dl_device=(2, 0))


# ---------------------------------------------------------------------------------------- import


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "offset", "broadcast", "0d", "empty"])
@pytest.mark.parametrize("np_dtype", NP_DTYPES, ids=lambda d: np.dtype(d).name)
def test_from_dlpack_numpy_every_layout(np_dtype, layout):
    base = (rng.standard_normal((6, 8)) * 4).astype(np_dtype)
    arr = {"contiguous": base[:3, :4], "transposed": base[:4, :3].T, "sliced": base[::2, 1::3],
           "offset": base[1:4, 2:6], "broadcast": np.broadcast_to(base[0, :4], (3, 4)), "0d": base[2:3, 3].reshape(()),
           "empty": base[:0, :4]}[layout]
    if layout == "contiguous":
        arr = np.ascontiguousarray(arr)
    t = bm.from_dlpack(arr)
    assert tuple(t.shape) == arr.shape and t.device == bm.device("cpu")
    assert t.dtype == bm.tensor(np.zeros(1, np_dtype)).dtype
    np.testing.assert_array_equal(t.numpy(), arr)
    if arr.size:
        assert t._data_ptr() == arr.__array_interface__["data"][0]  # zero-copy
    assert t.is_readonly == (not arr.flags.writeable)


def test_from_dlpack_numpy_shares_and_keeps_the_array_alive():
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = bm.from_dlpack(arr)
    arr[1, 1] = 100
    assert t.numpy()[1, 1] == 100
    t.add_(1)
    assert arr[0, 0] == 1
    del arr
    gc.collect()
    np.testing.assert_array_equal(t.numpy().ravel()[:3], [1, 2, 3])


@pytest.mark.parametrize("dtype", CPU_DTYPES + [bm.bfloat16], ids=str)
def test_from_dlpack_torch(dtype):
    src = torch.arange(24).reshape(4, 6).to(TORCH_OF[dtype])
    view = src[1:, ::2].t()  # strided, offset
    t = bm.from_dlpack(view)
    assert t.dtype == dtype and tuple(t.shape) == tuple(view.shape) and list(t.stride()) == list(view.stride())
    assert t._data_ptr() == view.data_ptr()
    expect = (view.float() if dtype == bm.bfloat16 else view).numpy()
    del src, view
    gc.collect()
    np.testing.assert_array_equal(_values(t), expect)


def test_round_trips_share_memory():
    t = bm.arange(5, dtype=bm.float32)
    back = bm.from_dlpack(torch.from_dlpack(t))
    assert back._data_ptr() == t._data_ptr()
    back.mul_(2)
    np.testing.assert_array_equal(t.numpy(), [0, 2, 4, 6, 8])
    assert bm.from_dlpack(t)._data_ptr() == t._data_ptr()


def test_from_dlpack_read_only_array_gives_a_read_only_tensor():
    arr = np.arange(4, dtype=np.float32)
    arr.flags.writeable = False
    t = bm.from_dlpack(arr)
    assert t.is_readonly
    with pytest.raises(RuntimeError, match="read-only"):
        t.add_(1)
    np.testing.assert_array_equal(arr, np.arange(4))


def test_from_dlpack_a_capsule():
    tt = torch.arange(4.0)
    t = bm.from_dlpack(torch.utils.dlpack.to_dlpack(tt))
    np.testing.assert_array_equal(t.numpy(), tt.numpy())
    cap = torch.utils.dlpack.to_dlpack(tt)
    bm.from_dlpack(cap)
    with pytest.raises(ValueError, match=r"^\[from_dlpack\] expected a DLPack capsule .* got one named 'used_dltensor"):
        bm.from_dlpack(cap)  # consumed once already


def test_from_dlpack_refusals():
    with pytest.raises(BufferError, match=r"^\[from_dlpack\] the producer's tensor has a negative stride"):
        bm.from_dlpack(np.arange(5.0)[::-1])
    with pytest.raises(TypeError, match=r"^\[from_dlpack\] DLPack dtype complex64 is not supported"):
        bm.from_dlpack(np.zeros(3, np.complex64))
    with pytest.raises(TypeError, match=r"^\[from_dlpack\] expected an object with __dlpack__"):
        bm.from_dlpack([1, 2, 3])
    with pytest.raises(ValueError, match=r"^\[from_dlpack\] the bool tensor holds bytes other than 0 and 1"):
        bm.from_dlpack(np.frombuffer(b"\x00\x02", dtype=np.bool_))

    class OnGpu:
        def __dlpack__(self, **kw):
            raise AssertionError("must not be asked for a capsule")

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(BufferError, match=r"^\[from_dlpack\] the producer's memory is on DLPack device \(2, 0\)"):
        bm.from_dlpack(OnGpu())
    with pytest.raises(TypeError, match=r"^\[from_dlpack\] the producer's __dlpack__ returned a int, not a DLPack"):
        bm.from_dlpack(_Holder(5))


def test_from_dlpack_refused_capsules_are_still_freed():
    gc.collect()
    tt = torch.zeros(3, dtype=torch.complex64)
    cap = torch.utils.dlpack.to_dlpack(tt)
    with pytest.raises(TypeError):
        bm.from_dlpack(cap)
    assert _capsule_name(cap) == "dltensor"  # not taken: its own destructor frees it


@pytest.mark.parametrize("device", DEVICES)
def test_from_dlpack_device_and_copy(device):
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = bm.from_dlpack(arr, device=device)
    assert t.device == bm.device(device)
    np.testing.assert_array_equal(t.to("cpu").numpy(), arr)
    c = bm.from_dlpack(arr, copy=True)
    c.add_(1)
    assert arr[0, 0] == 0
    if device != "cpu":
        with pytest.raises(BufferError, match=r"^\[from_dlpack\] moving the tensor to .* needs a copy"):
            bm.from_dlpack(arr, device=device, copy=False)
