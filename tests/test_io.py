"""bm.save_file / bm.load_file (safetensors): round trips of every dtype and layout on every device,
bit-exactness, metadata, byte-identical output and interop with the official `safetensors` package
both ways, atomic writes, and saved-then-loaded models giving bit-identical outputs.
Malformed files are in test_io_malformed.py."""

import json
import os
import struct

import numpy as np
import pytest
import safetensors
import safetensors.numpy
import safetensors.torch
import torch

import bessemer as bm
from bessemer import _core, nn
from bessemer.testing import to_numpy
from harness import ALL_DTYPES, DEVICES, LAYOUTS, dtypes_on, make_input

TORCH = {
    bm.bool: torch.bool,
    bm.int8: torch.int8,
    bm.uint8: torch.uint8,
    bm.int16: torch.int16,
    bm.int32: torch.int32,
    bm.int64: torch.int64,
    bm.float16: torch.float16,
    bm.bfloat16: torch.bfloat16,
    bm.float32: torch.float32,
    bm.float64: torch.float64,
}
NUMPY = {
    bm.bool: np.bool_,
    bm.int8: np.int8,
    bm.uint8: np.uint8,
    bm.int16: np.int16,
    bm.int32: np.int32,
    bm.int64: np.int64,
    bm.float16: np.float16,
    bm.float32: np.float32,
    bm.float64: np.float64,
}
OTHER = {d: [o for o in DEVICES if o != d] or [d] for d in DEVICES}


def raw(t) -> bytes:
    return bytes(_core._raw_bytes(t))


def torch_bytes(t: torch.Tensor) -> bytes:
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def to_torch(t) -> torch.Tensor:
    """The same bits as a torch tensor (bfloat16 included)."""
    if t.numel() == 0:
        return torch.empty(t.shape, dtype=TORCH[t.dtype])
    return torch.from_numpy(np.frombuffer(raw(t), np.uint8).copy()).view(TORCH[t.dtype]).reshape(t.shape)


def load_everywhere(tensors, path, device):
    """Save on `device`, load on it and on every other device: yields (load device, loaded dict, saved dict).
    float64 goes only where it is supported (cpu)."""
    for load_dev in [device] + OTHER[device]:
        saved = {k: v for k, v in tensors.items() if v.dtype != bm.float64 or load_dev == "cpu"}
        bm.save_file(saved, path)
        yield load_dev, bm.load_file(path, device=load_dev), saved


def random_bits(shape, dtype, device, seed=0):
    """A tensor of random bit patterns (NaN payloads, infinities, subnormals, -0.0 included)."""
    n = int(np.prod(shape, dtype=np.int64)) * bm.tensor(0, dtype=dtype).element_size()
    data = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)
    return _core._from_bytes(data, 0, list(shape), dtype, device)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("device", DEVICES)
def test_round_trip_every_dtype_and_layout(tmp_path, device, layout):
    rng = np.random.default_rng(1)
    tensors, expected = {}, {}
    for dt in dtypes_on(device, ALL_DTYPES):
        t, vals = make_input((3, 5), dt, device, layout, rng)
        tensors[str(dt)] = t
        expected[str(dt)] = (dt, vals)
    for load_dev, out, saved in load_everywhere(tensors, tmp_path / "t.safetensors", device):
        assert sorted(out) == sorted(saved)
        for name in saved:
            dt, vals = expected[name]
            got = out[name]
            assert got.dtype == dt and str(got.device) == load_dev
            assert got.shape == tensors[name].shape and got.is_contiguous()
            assert np.array_equal(to_numpy(got).astype(np.float64), np.asarray(vals, dtype=np.float64)), name
            assert raw(got) == raw(tensors[name])


@pytest.mark.parametrize("device", DEVICES)
def test_every_bit_pattern_survives(tmp_path, device):
    """Raw bits, not values: NaN payloads, -0.0 and subnormals of every float dtype, bfloat16 included."""
    tensors = {
        str(dt): random_bits((7, 9), dt, device, seed=i)
        for i, dt in enumerate(dtypes_on(device, ALL_DTYPES))
        if dt != bm.bool
    }
    for _, out, saved in load_everywhere(tensors, tmp_path / "bits.safetensors", device):
        assert sorted(out) == sorted(saved)
        for name, t in saved.items():
            assert raw(out[name]) == raw(t), name


def test_bool_bytes_are_normalised(tmp_path):
    """A file may hold any nonzero byte for True; bessemer bools are exactly 0 or 1 (as numpy reads them)."""
    header = json.dumps({"b": {"dtype": "BOOL", "shape": [4], "data_offsets": [0, 4]}}).encode()
    header += b" " * (-len(header) % 8)
    path = tmp_path / "b.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + bytes([0, 1, 2, 255]))
    assert safetensors.numpy.load_file(path)["b"].tolist() == [False, True, True, True]
    for d in DEVICES:
        t = bm.load_file(path, device=d)["b"]
        assert t.tolist() == [False, True, True, True] and raw(t) == bytes([0, 1, 1, 1])
        assert (t == bm.tensor([False, True, True, True], device=d)).tolist() == [True] * 4


@pytest.mark.parametrize("device", DEVICES)
def test_strided_views_and_shared_memory(tmp_path, device):
    base = bm.arange(24, dtype=bm.float32, device=device).reshape(4, 6)
    views = {
        "base": base,
        "t": base.transpose(0, 1),
        "step": base[::2, 1::3],
        "row": base[2],
        "col": base[:, 4],
        "expand": base[1:2, :].expand(3, 6),
        "perm": base.reshape(2, 2, 6).permute(2, 0, 1),
        "alias": base,  # the same tensor twice: written twice
    }
    path = tmp_path / "v.safetensors"
    bm.save_file(views, path)
    ref = np.arange(24, dtype=np.float32).reshape(4, 6)
    want = {
        "base": ref,
        "t": ref.T,
        "step": ref[::2, 1::3],
        "row": ref[2],
        "col": ref[:, 4],
        "expand": np.broadcast_to(ref[1:2], (3, 6)),
        "perm": ref.reshape(2, 2, 6).transpose(2, 0, 1),
        "alias": ref,
    }
    ours = bm.load_file(path, device=device)
    theirs = safetensors.numpy.load_file(path)
    for name, w in want.items():
        assert np.array_equal(ours[name].numpy(), w) and np.array_equal(theirs[name], w), name
    # The offsets cover each tensor's own bytes, aliases included.
    assert os.path.getsize(path) - 8 - int.from_bytes(path.read_bytes()[:8], "little") == 4 * sum(
        w.size for w in want.values()
    )


@pytest.mark.parametrize("device", DEVICES)
def test_empty_and_zero_dim_tensors(tmp_path, device):
    tensors = {}
    for dt in dtypes_on(device, ALL_DTYPES):
        tensors[f"{dt}_0d"] = bm.ones((), dtype=dt, device=device)
        tensors[f"{dt}_empty"] = bm.zeros(0, dtype=dt, device=device)
        tensors[f"{dt}_empty3"] = bm.zeros((3, 0, 2), dtype=dt, device=device)
    path = tmp_path / "e.safetensors"
    bm.save_file(tensors, path)
    out = bm.load_file(path, device=device)
    theirs = safetensors.torch.load_file(path)
    for name, t in tensors.items():
        assert out[name].shape == t.shape and out[name].dtype == t.dtype
        assert tuple(theirs[name].shape) == t.shape and theirs[name].dtype == TORCH[t.dtype]
        assert raw(out[name]) == raw(t)
    # Only empty tensors: nothing to map or copy.
    bm.save_file({k: v for k, v in tensors.items() if "empty" in k}, path)
    assert all(v.numel() == 0 for v in bm.load_file(path, device=device).values())


def test_no_tensors(tmp_path):
    path = tmp_path / "none.safetensors"
    bm.save_file({}, path)
    assert path.read_bytes() == b"\x08\x00\x00\x00\x00\x00\x00\x00{}      " == safetensors.numpy.save({})
    assert bm.load_file(path) == {} and safetensors.numpy.load_file(path) == {}


def test_metadata(tmp_path):
    path = tmp_path / "m.safetensors"
    meta = {"format": "pt", "note": 'ünïcødé "quoted" \\ \n\t\x01', "empty": ""}
    bm.save_file({"x": bm.ones(2)}, path, metadata=meta)
    assert bm.io.load_metadata(path) == meta
    with safetensors.safe_open(path, framework="np") as f:
        assert f.metadata() == meta
    assert bm.load_file(path)["x"].tolist() == [1.0, 1.0]
    bm.save_file({"x": bm.ones(2)}, path)
    assert bm.io.load_metadata(path) is None
    bm.save_file({"x": bm.ones(2)}, path, metadata={})
    assert bm.io.load_metadata(path) == {}


def test_load_file_defaults_to_cpu(tmp_path):
    path = tmp_path / "d.safetensors"
    bm.save_file({"x": bm.ones(2, device=DEVICES[-1])}, path)
    old = bm.get_default_device()
    try:
        bm.set_default_device(DEVICES[-1])
        assert str(bm.load_file(path)["x"].device) == "cpu"
        assert bm.load_file(path, device=bm.device(DEVICES[-1]))["x"].device is bm.device(DEVICES[-1])
    finally:
        bm.set_default_device(old)


# ------------------------------------------------------------------------- the official package


def _interop_tensors(device, with_bf16=True):
    rng = np.random.default_rng(3)
    out = {}
    for i, dt in enumerate(dtypes_on(device, ALL_DTYPES)):
        if dt == bm.bfloat16 and not with_bf16:
            continue
        shape = [(2, 3), (5,), (), (0, 4), (2, 1, 3), (4, 4), (1,)][i % 7]
        out[f"w.{i}.{dt}"], _ = make_input(shape, dt, device, "transposed" if len(shape) >= 2 else "contiguous", rng)
    out["a_first_by_name"] = bm.ones(3, dtype=bm.float32, device=device)
    return out


@pytest.mark.parametrize("device", DEVICES)
def test_bytes_identical_to_the_official_writer(tmp_path, device):
    path = tmp_path / "o.safetensors"
    tensors = _interop_tensors(device)
    for meta in (None, {}, {"framework": "bessemer"}):
        bm.save_file(tensors, path, metadata=meta)
        as_torch = {k: to_torch(v) for k, v in tensors.items()}
        assert path.read_bytes() == safetensors.torch.save(as_torch, metadata=meta)
        no_bf16 = {
            # reshape: np.ascontiguousarray makes a 0-d array 1-d
            k: np.ascontiguousarray(to_numpy(v), NUMPY[v.dtype]).reshape(tuple(v.shape))
            for k, v in tensors.items() if v.dtype != bm.bfloat16
        }
        bm.save_file({k: v for k, v in tensors.items() if v.dtype != bm.bfloat16}, path, metadata=meta)
        assert path.read_bytes() == safetensors.numpy.save(no_bf16, metadata=meta)
    # Several metadata keys: the official writer's order is a hash map's; ours is sorted.
    meta = {"z": "1", "framework": "pt", "a": "2"}
    bm.save_file(tensors, path, metadata=meta)
    n = int.from_bytes(path.read_bytes()[:8], "little")
    assert path.read_bytes()[8 : 8 + n].startswith(b'{"__metadata__":{"a":"2","framework":"pt","z":"1"},')
    theirs = safetensors.torch.save({k: to_torch(v) for k, v in tensors.items()}, metadata=meta)
    assert json.loads(path.read_bytes()[8 : 8 + n]) == json.loads(theirs[8 : 8 + n])
    assert path.read_bytes()[8 + n :] == theirs[8 + n :]


@pytest.mark.parametrize("device", DEVICES)
def test_official_reader_reads_our_files(tmp_path, device):
    path = tmp_path / "ours.safetensors"
    tensors = _interop_tensors(device)
    bm.save_file(tensors, path)
    theirs = safetensors.torch.load_file(path)
    assert sorted(theirs) == sorted(tensors)
    for k, v in tensors.items():
        assert theirs[k].dtype == TORCH[v.dtype] and tuple(theirs[k].shape) == v.shape
        assert torch_bytes(theirs[k]) == raw(v), k
        if v.dtype != bm.bfloat16:
            assert torch.equal(theirs[k], torch.from_numpy(to_numpy(v).astype(NUMPY[v.dtype]))), k
    theirs_np = safetensors.numpy.load_file(_save_without_bf16(tensors, tmp_path))
    for k, v in theirs_np.items():
        assert np.array_equal(v, to_numpy(tensors[k])) and v.dtype == NUMPY[tensors[k].dtype]


def _save_without_bf16(tensors, tmp_path):
    path = tmp_path / "nobf16.safetensors"
    bm.save_file({k: v for k, v in tensors.items() if v.dtype != bm.bfloat16}, path)
    return path


@pytest.mark.parametrize("device", DEVICES)
def test_we_read_the_official_writers_files(tmp_path, device):
    g = torch.Generator().manual_seed(0)
    src = {
        "f32": torch.randn(4, 5, generator=g),
        "f16": torch.randn(3, 2, generator=g).half(),
        "bf16": torch.randn(6, 7, generator=g).bfloat16(),
        "bf16_t": torch.randn(3, 4, generator=g).bfloat16().t().contiguous(),
        "i32": torch.randint(-1000, 1000, (5,), generator=g, dtype=torch.int32),
        "i64": torch.randint(-(2**62), 2**62, (2, 2), generator=g, dtype=torch.int64),
        "bool": torch.rand(9, generator=g) < 0.5,
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
    }
    if device == "cpu":
        src["f64"] = torch.randn(3, 3, generator=g, dtype=torch.float64)
    path = tmp_path / "theirs.safetensors"
    safetensors.torch.save_file(src, path, metadata={"format": "pt"})
    ours = bm.load_file(path, device=device)
    assert list(ours) == list(safetensors.torch.load_file(path))  # file (offset) order, as the official reader
    for k, t in src.items():
        got = ours[k]
        assert str(got.device) == device and got.dtype == {v: kk for kk, v in TORCH.items()}[t.dtype]
        assert got.shape == tuple(t.shape) and raw(got) == torch_bytes(t), k
    assert bm.io.load_metadata(path) == {"format": "pt"}
    bf = ours["bf16"].to(bm.float32).numpy()
    assert np.array_equal(bf, src["bf16"].float().numpy())  # bfloat16 values, not just bits


def test_float64_to_metal_names_the_tensor(tmp_path):
    path = tmp_path / "f64.safetensors"
    bm.save_file({"ok": bm.ones(2), "weights.double": bm.ones(2, dtype=bm.float64)}, path)
    for d in DEVICES:
        if d == "cpu":
            assert bm.load_file(path, device=d)["weights.double"].dtype == bm.float64
            continue
        with pytest.raises(bm.UnsupportedError, match=r"'weights\.double'.*float64.*" + d):
            bm.load_file(path, device=d)


def test_dtypes_bessemer_lacks_are_unsupported_not_malformed(tmp_path):
    path = tmp_path / "u16.safetensors"
    safetensors.numpy.save_file({"pixels": np.arange(6, dtype=np.uint16), "x": np.ones(2, np.float32)}, path)
    with pytest.raises(bm.UnsupportedError, match=r"'pixels'.*U16"):
        bm.load_file(path)


# ------------------------------------------------------------------------- save_file arguments, atomicity


def test_save_file_argument_errors(tmp_path):
    path = tmp_path / "bad.safetensors"
    with pytest.raises(TypeError, match="names must be str"):
        bm.save_file({1: bm.ones(1)}, path)
    with pytest.raises(TypeError, match=r"tensors\['x'\] must be a bessemer Tensor.*ndarray"):
        bm.save_file({"x": np.ones(1)}, path)
    with pytest.raises(TypeError, match="dict of name"):
        bm.save_file([bm.ones(1)], path)
    with pytest.raises(ValueError, match="reserved"):
        bm.save_file({"__metadata__": bm.ones(1)}, path)
    with pytest.raises(ValueError, match="UTF-8"):
        bm.save_file({"\ud800": bm.ones(1)}, path)
    with pytest.raises(TypeError, match="metadata must map str -> str"):
        bm.save_file({"x": bm.ones(1)}, path, metadata={"a": 1})
    with pytest.raises(TypeError, match="metadata must be a dict"):
        bm.save_file({"x": bm.ones(1)}, path, metadata=["a"])
    assert not path.exists() and os.listdir(tmp_path) == []


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "model.safetensors"
    bm.save_file({"x": bm.ones(3)}, path)
    before = path.read_bytes()
    calls = []

    def failing(t):
        calls.append(t)
        if len(calls) == 2:
            raise OSError("disk full")
        return original(t)

    original = _core._raw_bytes
    monkeypatch.setattr(bm.io._core, "_raw_bytes", failing)
    with pytest.raises(OSError, match="disk full"):
        bm.save_file({"a": bm.zeros(1000), "b": bm.zeros(1000)}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["model.safetensors"]  # no temp file left
    bm.save_file({"y": bm.zeros(2)}, str(path))  # replaces it
    assert list(bm.load_file(str(path))) == ["y"]


def test_new_files_get_the_usual_permissions(tmp_path):
    mask = os.umask(0o022)
    try:
        bm.save_file({"x": bm.ones(1)}, tmp_path / "p.safetensors")
        assert (tmp_path / "p.safetensors").stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(mask)


def test_loaded_tensors_own_their_memory(tmp_path, monkeypatch):
    path = tmp_path / "big.safetensors"
    x = bm.arange(1 << 18, dtype=bm.float32)
    bm.save_file({"x": x}, path)
    y = bm.load_file(path)["x"]
    bm.save_file({"x": bm.zeros(1 << 18)}, path)  # the file changes; y must not
    path.unlink()
    assert raw(y) == raw(x)
    # Where mapping fails, one plain read serves.
    bm.save_file({"x": x}, path)
    import mmap

    def no_mmap(*a, **k):
        raise OSError("mmap unavailable")

    monkeypatch.setattr(mmap, "mmap", no_mmap)
    assert raw(bm.load_file(path)["x"]) == raw(x)


# ------------------------------------------------------------------------- models


def _mlp(device):
    return nn.Sequential(
        nn.Linear(6, 16, device=device),
        nn.ReLU(),
        nn.Linear(16, 16, device=device),
        nn.ReLU(),
        nn.Linear(16, 3, device=device),
    )


@pytest.mark.parametrize("device", DEVICES)
def test_saved_then_loaded_model_gives_bit_identical_outputs(tmp_path, device):
    bm.manual_seed(7)
    model = _mlp(device)
    x = bm.randn(5, 6, device=device)
    y = model(x)
    path = tmp_path / "mlp.safetensors"
    bm.save_model(model, path)
    for i, load_dev in enumerate([device] + OTHER[device]):
        # A seed of its own: after manual_seed(7) every device draws the same bits
        # (by design), so an unseeded model on another device could equal `model`.
        bm.manual_seed(1000 + i)
        fresh = _mlp(load_dev)  # different random weights
        assert raw(fresh(x.to(load_dev))) != raw(model(x).to(load_dev))
        missing, unexpected = bm.load_model(fresh, path)
        assert missing == [] and unexpected == []
        assert all(str(t.device) == load_dev for t in fresh.state_dict().values())
        if load_dev == device:
            assert raw(fresh(x)) == raw(y)
        for k, v in model.state_dict().items():
            assert raw(fresh.state_dict()[k]) == raw(v), k
    # The official reader sees torch's state_dict keys.
    assert sorted(safetensors.torch.load_file(path)) == sorted(model.state_dict())


def test_load_model_key_checks(tmp_path):
    path = tmp_path / "m.safetensors"
    bm.save_model(nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)), path)
    other = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1), nn.ReLU(), nn.Linear(1, 1))
    w = other[0].weight.tolist()
    with pytest.raises(ValueError, match=r"missing keys: 4\.weight, 4\.bias"):
        bm.load_model(other, path)
    assert other[0].weight.tolist() == w  # nothing modified
    missing, unexpected = bm.load_model(other, path, strict=False)
    assert missing == ["4.weight", "4.bias"] and unexpected == []
    assert other[0].weight.tolist() != w
    with pytest.raises(ValueError, match=r"'0\.weight': checkpoint shape \(3, 2\), model shape \(4, 2\)"):
        bm.load_model(nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1)), path)
