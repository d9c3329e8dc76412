"""Every NumPy input is read right or refused (docs/numpy.md).

A hypothesis test draws arrays of every supported dtype in both byte orders, read-only or not,
unaligned, with negative, zero or partial-item strides, or memory-mapped from a file, and checks:
bm.tensor gives exactly NumPy's values on every device; bm.from_numpy gives them too and shares the
memory, or raises ValueError exactly for the layouts it cannot share; and a tensor over a read-only
array refuses every in-place write (RuntimeError naming the op) and leaves the array's bytes as they
were. Writes through the other paths (nn layers, optimizers, nn.init, state dicts, gradients) are in
test_numpy_readonly.py."""

import os
import re
import shutil
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bessemer as bm
from bessemer import _core
from harness import DEVICES

DTYPES = [np.bool_, np.int32, np.int64, np.float16, np.float32, np.float64]
BM = {np.dtype(np.bool_): bm.bool, np.dtype(np.int32): bm.int32, np.dtype(np.int64): bm.int64,
      np.dtype(np.float16): bm.float16, np.dtype(np.float32): bm.float32, np.dtype(np.float64): bm.float64}
LAYOUTS = ["contiguous", "negative", "stepped", "transposed", "broadcast", "unaligned", "field", "memmap_r",
           "memmap_r+"]
_TMP = tempfile.mkdtemp(prefix="bm-numpy-inputs-")


@pytest.fixture(scope="module", autouse=True)
def _remove_memmap_files():
    yield
    shutil.rmtree(_TMP, ignore_errors=True)


def same_values(got: np.ndarray, want: np.ndarray) -> bool:
    """Exactly NumPy's values: bools by truth value, numbers bit for bit (any NaN matches any NaN)."""
    want = np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype.newbyteorder("="):
        return False
    if want.dtype == np.bool_:
        return bool(np.array_equal(got.view(np.uint8) != 0, want.view(np.uint8) != 0))
    native = want.astype(want.dtype.newbyteorder("="))
    if native.dtype.kind == "f":
        nan = np.isnan(native)
        if not np.array_equal(nan, np.isnan(got)):
            return False
        native, got = native[~nan], got[~nan]
    return native.tobytes() == np.ascontiguousarray(got).tobytes()


def raw_bytes(a: np.ndarray) -> bytes:
    """Every byte the array's elements occupy (what a write into it would change)."""
    return np.array(a, copy=True, order="C").reshape(-1).view(np.uint8).tobytes() if a.size else b""


@st.composite
def arrays(draw):
    """(array, layout, writeable): the values are random bytes, so floats include NaNs, infinities
    and subnormals, and bools include bytes other than 0 and 1."""
    dt = np.dtype(draw(st.sampled_from(DTYPES))).newbyteorder(draw(st.sampled_from("<>")))
    layout = draw(st.sampled_from(LAYOUTS))
    shape = tuple(draw(st.lists(st.integers(0 if layout != "broadcast" else 1, 4), min_size=0, max_size=3)))
    if layout == "broadcast":
        shape = (draw(st.integers(2, 3)),) + shape[1:]  # (never 0-d)
    n = int(np.prod(shape))
    isz = dt.itemsize
    raw = draw(st.binary(min_size=isz * max(2 * n, 1), max_size=isz * max(2 * n, 1)))
    if dt == np.bool_:
        raw = bytes(b % 3 for b in raw)  # 2 is a non-canonical True
    if layout == "unaligned":
        buf = bytearray(len(raw) + 1)
        buf[1:] = raw
        a = np.frombuffer(buf, dtype=dt, count=n, offset=1).reshape(shape)
    elif layout == "field":  # a field of a packed record: strides of itemsize + 1 bytes
        rec = np.zeros(n, dtype=np.dtype([("pad", "u1"), ("v", dt)]))
        rec["v"] = np.frombuffer(raw, dtype=dt, count=n)
        a = rec["v"].reshape(shape)
    elif layout.startswith("memmap"):
        path = os.path.join(_TMP, f"m{draw(st.integers(0, 2**31))}.bin")
        with open(path, "wb") as f:
            f.write(raw[: isz * n] or b"\0" * isz)
        mode = layout.split("_")[1]
        a = np.memmap(path, dtype=dt, mode=mode, shape=(max(n, 1),))[:n].reshape(shape)
    else:
        base = np.frombuffer(raw, dtype=dt, count=2 * n).copy()
        if layout == "contiguous":
            a = base[:n].reshape(shape)
        elif layout == "negative":
            a = np.flip(base[:n].reshape(shape))  # every stride negative
        elif layout == "stepped":
            a = base[::2][:n].reshape(shape)
        elif layout == "transposed":
            a = base[:n].reshape(shape).T
        else:  # broadcast: zero strides, read-only by NumPy's rule
            row = base[: n // shape[0]].reshape(shape[1:])
            a = np.broadcast_to(row, shape)
    a = np.asarray(a)  # (np.flip of a 0-d array is a NumPy scalar)
    writeable = a.flags.writeable and draw(st.booleans())
    if not writeable and a.flags.writeable:
        a.flags.writeable = False
    return a, layout


def shareable(a: np.ndarray) -> bool:
    """What from_numpy can share: native byte order, aligned, whole non-negative strides, 0/1 bools."""
    if not a.dtype.isnative or not a.flags.aligned:
        return False
    if any(s < 0 or s % a.itemsize for s in a.strides):
        return False
    return a.dtype != np.bool_ or not a.size or int(a.view(np.uint8).max()) <= 1


# Every in-place write a user can make into a tensor, by the op name its error names.
WRITES = {
    "add_": lambda t: t.add_(1),
    "sub_": lambda t: t.sub_(t),
    "mul_": lambda t: t.mul_(2),
    "div_": lambda t: t.div_(2),
    "fill_": lambda t: t.fill_(1),
    "zero_": lambda t: t.zero_(),
    "copy_": lambda t: t.copy_(bm.zeros(*t.shape, dtype=t.dtype)),
    "clamp_": lambda t: t.clamp_(0, 1),
    "index_put_": lambda t: t.__setitem__(..., 0),
    "uniform_": lambda t: bm.nn.init.uniform_(t),
    "normal_": lambda t: bm.nn.init.normal_(t),
    "index_copy_": lambda t: t.index_copy_(0, bm.tensor([0]), t[-1:].clone()),
    "index_add_": lambda t: t.index_add_(0, bm.tensor([0]), t[-1:].clone()),
}


def applicable(name: str, t) -> bool:
    if name in ("uniform_", "normal_") and t.dtype not in (bm.float16, bm.float32, bm.float64):
        return False
    if name == "div_" and t.dtype in (bm.bool, bm.int32, bm.int64):
        return False  # a float result does not fit an integer tensor (a TypeError of its own)
    if name in ("index_copy_", "index_add_") and (t.ndim == 0 or t.shape[0] == 0):
        return False
    return True


def check_refused(t, array: np.ndarray, before: bytes) -> None:
    for name, write in WRITES.items():
        if not applicable(name, t):
            continue
        op = name
        with pytest.raises(RuntimeError, match=rf"\[{op}\] cannot write into a read-only tensor"):
            write(t)
        with bm.no_grad(), pytest.raises(RuntimeError, match=rf"\[{op}\] cannot write into a read-only tensor"):
            write(t)
        assert raw_bytes(array) == before, name


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrays())
def test_every_array_is_read_right_or_refused(case):
    a, layout = case
    before = raw_bytes(a)
    for device in DEVICES:
        if a.dtype.kind == "f" and a.itemsize == 8 and device != "cpu":
            with pytest.raises(bm.UnsupportedError, match="float64"):
                bm.tensor(a, device=device)
            continue
        t = bm.tensor(a, device=device)
        assert t.dtype == BM[a.dtype.newbyteorder("=")] and not t.is_readonly
        assert same_values(t.numpy(), a), (layout, device)
        # the core's copy (behind t[idx] = array, index arrays and bm.load), given the array as it is
        assert same_values(_core._from_numpy_copy(a, device).numpy(), a), (layout, device)
        z = bm.zeros(*a.shape, dtype=t.dtype, device=device)
        z[...] = a
        assert same_values(z.numpy(), a), (layout, device)
    assert raw_bytes(a) == before

    if not shareable(a):
        with pytest.raises(ValueError, match=r"^\[from_numpy\] .*bessemer\.tensor\(array\)"):
            bm.from_numpy(a)
        return
    t = bm.from_numpy(a)
    assert same_values(t.numpy(), a), layout
    assert t.is_readonly == (not a.flags.writeable)
    assert t.numpy().flags.writeable == a.flags.writeable  # numpy() opens no back door
    if a.size and a.flags.writeable:
        assert t.numpy().__array_interface__["data"][0] == a.__array_interface__["data"][0]  # shared memory
    if t.is_readonly:
        check_refused(t, a, before)
        if t.ndim:
            check_refused(t[:1], a, before)  # views share the storage, and its flag
            check_refused(t.transpose(0, -1), a, before)
        for device in DEVICES:  # a copy elsewhere (or a clone) is the user's own: writeable
            if t.dtype != bm.float64 or device == "cpu":
                c = t.to(device) if device != "cpu" else t.clone()
                assert not c.is_readonly
                c.fill_(0)
        assert raw_bytes(a) == before


def test_control_same_values_catches_a_misread():
    """Control: the comparison fails for bytes read in the wrong byte order or a truncated copy."""
    a = np.arange(1, 7, dtype=">f4")
    assert same_values(a.astype("<f4"), a)
    assert not same_values(a.view("<f4"), a)
    assert not same_values(np.arange(1, 7, dtype=np.int32), np.arange(1, 7, dtype=np.int64))
    b = np.frombuffer(b"\x00\x02\x01", dtype=np.bool_)
    assert same_values(np.array([False, True, True]), b)
    assert not same_values(np.array([False, False, True]), b)


def test_control_writeable_arrays_are_written():
    """Control: the same writes into a tensor over a writeable array go through and change the
    array's bytes, so the read-only checks above could see a write."""
    for name, write in WRITES.items():
        a = np.arange(6, dtype=np.float32).reshape(3, 2) + 5
        before = raw_bytes(a)
        t = bm.from_numpy(a)
        assert not t.is_readonly
        write(t)
        assert raw_bytes(a) != before, name


UNSUPPORTED = [np.complex64, np.complex128, np.longdouble, np.object_, "U3", "S3", "V4", "M8[s]", "m8[s]",
               [("a", "i4"), ("b", "f4")]]


@pytest.mark.parametrize("dt", UNSUPPORTED, ids=str)
def test_unsupported_dtypes_are_refused_by_name(dt):
    a = np.zeros(3, dtype=dt)
    name = str(a.dtype)
    with pytest.raises(TypeError, match=r"^\[tensor\] .*" + re.escape(name)):
        bm.tensor(a)
    with pytest.raises(TypeError, match=r"^\[from_numpy\] numpy dtype " + re.escape(name)):
        bm.from_numpy(a)


@pytest.mark.parametrize("dt", [np.uint16, np.uint32, np.uint64, ">u2"])  # int8, uint8, int16 are dtypes
def test_other_integers_widen_to_int64_exactly(dt):
    info = np.iinfo(np.dtype(dt))
    a = np.array([info.min, 0, 1, min(info.max, np.iinfo(np.int64).max)], dtype=dt)
    t = bm.tensor(a)
    assert t.dtype == bm.int64
    assert t.tolist() == [int(v) for v in a]
    name = re.escape(str(np.dtype(dt)))
    with pytest.raises(TypeError, match=rf"\[from_numpy\] numpy dtype {name} is not supported.*int64"):
        bm.from_numpy(a)


def test_uint64_beyond_int64_is_refused():
    with pytest.raises(OverflowError, match=r"\[tensor\] value 18446744073709551615 does not fit in int64"):
        bm.tensor(np.array([1, 2**64 - 1], dtype=np.uint64))
    with pytest.raises(OverflowError, match=r"\[tensor\] value 9223372036854775808 does not fit in int64"):
        bm.tensor([2**63])  # NumPy makes this list a uint64 array
    assert bm.tensor(np.array([2**63 - 1], dtype=np.uint64)).tolist() == [2**63 - 1]
    assert bm.tensor(np.array([2**63], dtype=np.uint64), dtype=bm.float32).tolist() == [2.0**63]


def test_requested_dtype_is_taken_from_the_source_values():
    """bm.tensor([0.1], dtype=float64) is 0.1, not float32(0.1) widened (as it once was)."""
    assert bm.tensor([0.1], dtype=bm.float64).tolist() == [0.1]
    assert bm.tensor([[1e-40, 0.1]], dtype=bm.float64).numpy()[0, 0] == 1e-40
    assert bm.tensor([0.1]).dtype == bm.float32  # without dtype: the default float dtype, as torch


@pytest.mark.parametrize("device", DEVICES)
def test_numpy_scalars_and_0d_arrays(device):
    for v, dtype in [(np.float16(1.5), bm.float16), (np.float32(-2.25), bm.float32), (np.int32(7), bm.int32),
                     (np.int64(-8), bm.int64), (np.bool_(True), bm.bool), (np.int8(-3), bm.int8),
                     (np.uint16(65535), bm.int64), (np.array(2.5, dtype=">f4"), bm.float32)]:
        t = bm.tensor(v, device=device)
        assert t.shape == () and t.dtype == dtype and t.item() == v.item()
    if device == "cpu":
        assert bm.tensor(np.float64(0.1)).dtype == bm.float64 and bm.tensor(np.float64(0.1)).item() == 0.1
        t = bm.from_numpy(np.array(3.5, dtype=np.float32))
        assert t.shape == () and t.item() == 3.5


def test_from_numpy_takes_only_arrays():
    for v in (np.float32(1.0), [1, 2], 3.0, None):
        with pytest.raises(TypeError, match=r"^\[from_numpy\] expected a numpy.ndarray, got"):
            bm.from_numpy(v)


@pytest.mark.parametrize("device", DEVICES)
def test_bools_stored_as_other_bytes_read_as_true(device):
    a = np.frombuffer(b"\x00\x02\x01\xff", dtype=np.bool_)
    t = bm.tensor(a, device=device)
    assert t.tolist() == [False, True, True, True]
    assert t.numpy().view(np.uint8).tolist() == [0, 1, 1, 1]
    assert t.sum().item() == a.sum() == 3
    assert (t == bm.tensor([False, True, True, True], device=device)).all().item()
    with pytest.raises(ValueError, match=r"\[from_numpy\] the bool array holds bytes other than 0 and 1"):
        bm.from_numpy(a)


def test_from_numpy_of_a_stepped_array_under_an_in_place_graph():
    """The storage of a shared stepped array spans all its elements' memory: an in-place write into
    a view of it with a graph (CopySlices) lays its gradient out over that span."""
    a = np.arange(12, dtype=np.float32)[::2]  # strides of 2 elements
    x = bm.from_numpy(a)
    w = bm.ones(2, requires_grad=True)
    x[1:3].mul_(w)
    (x * x).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2 * 2 * 2, 2 * 4 * 4])
