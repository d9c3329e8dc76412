"""Malformed and truncated safetensors files: each raises bm.SafetensorsError (a ValueError) naming the
file and what is wrong, never another exception or a crash. Fuzzing a valid file (every truncation,
every header byte corrupted) checks we reject exactly what the official reader rejects."""

import json
import struct

import numpy as np
import pytest
import safetensors.torch
import torch

import bessemer as bm
from bessemer import _core


def overwrite(path, data: bytes) -> None:
    """path.write_bytes without O_TRUNC: ext4 flushes a truncated file on close, which made the fuzz
    loops below spend their time waiting for the disk."""
    with open(path, "r+b" if path.exists() else "wb") as f:
        f.write(data)
        f.truncate()


def build(header, data=b"", *, raw_header=None, pad=True):
    h = raw_header if raw_header is not None else json.dumps(header, separators=(",", ":")).encode()
    if pad:
        h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def f32(name="x", shape=(2,), begin=0, end=None):
    n = int(np.prod(shape)) * 4
    return {name: {"dtype": "F32", "shape": list(shape), "data_offsets": [begin, begin + n if end is None else end]}}


HUGE = 2**64 - 1

# (id, file bytes, what the message must say)
CASES = [
    ("empty", b"", r"0 bytes, too short to hold the 8-byte header length"),
    ("seven_bytes", b"\x08\x00\x00\x00\x00\x00\x00", r"7 bytes, too short"),
    ("length_beyond_file", struct.pack("<Q", 64) + b"{}", r"header length 64 goes beyond the end of the file \(10"),
    ("length_huge", struct.pack("<Q", HUGE) + b"{}", r"header length 18446744073709551615 is larger than the"),
    ("length_over_limit", struct.pack("<Q", 100_000_001) + b"{}", r"larger than the 100000000-byte limit"),
    ("length_zero", struct.pack("<Q", 0), r"not valid JSON"),
    ("not_utf8", build(None, raw_header=b'{"\xff":1}'), r"not valid UTF-8"),
    ("not_json", build(None, raw_header=b"{'x': 1}"), r"not valid JSON"),
    ("json_then_garbage", build(None, raw_header=b"{} x"), r"not valid JSON"),
    ("nan", build(None, raw_header=b'{"__metadata__":{"a":NaN}}'), r"not valid JSON"),
    ("deeply_nested", build(None, raw_header=b'{"a":' + b"[" * 100000 + b"]" * 100000 + b"}"), r"not valid JSON"),
    ("not_an_object", build(None, raw_header=b"[1, 2]"), r"must be a JSON object, got list"),
    ("entry_not_object", build({"x": [1, 2]}), r"entry for tensor 'x' must be an object"),
    ("missing_dtype", build({"x": {"shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4), r"'x' has no 'dtype'"),
    ("missing_offsets", build({"x": {"dtype": "F32", "shape": [1]}}, b"\0" * 4), r"'x' has no 'data_offsets'"),
    (
        "unknown_dtype",
        build({"x": {"dtype": "F31", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4),
        r"tensor 'x' has unknown dtype 'F31'",
    ),
    (
        "dtype_not_str",
        build({"x": {"dtype": 32, "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4),
        r"unknown dtype 32",
    ),
    (
        "lowercase_dtype",
        build({"x": {"dtype": "f32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4),
        r"unknown dtype 'f32'",
    ),
    (
        "negative_shape",
        build(f32(shape=(2,)) | {"y": {"dtype": "F32", "shape": [-1], "data_offsets": [8, 8]}}, b"\0" * 8),
        r"shape of tensor 'y' must be a list of non-negative integers, got \[-1\]",
    ),
    (
        "float_shape",
        build({"x": {"dtype": "F32", "shape": [2.0], "data_offsets": [0, 8]}}, b"\0" * 8),
        r"non-negative integers, got \[2.0\]",
    ),
    (
        "bool_shape",
        build({"x": {"dtype": "F32", "shape": [True], "data_offsets": [0, 4]}}, b"\0" * 4),
        r"non-negative integers, got \[True\]",
    ),
    ("shape_not_list", build({"x": {"dtype": "F32", "shape": 2, "data_offsets": [0, 8]}}, b"\0" * 8), r"got 2"),
    (
        "shape_beyond_u64",
        build({"x": {"dtype": "F32", "shape": [0, 2**64], "data_offsets": [0, 0]}}),
        r"non-negative integers",
    ),
    (
        "three_offsets",
        build({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 4]}}, b"\0" * 4),
        r"data_offsets of tensor 'x' must be \[begin, end\]",
    ),
    (
        "negative_offset",
        build({"x": {"dtype": "F32", "shape": [0], "data_offsets": [-4, -4]}}),
        r"data_offsets of tensor 'x' must be \[begin, end\]",
    ),
    (
        "shape_offsets_mismatch",
        build(f32(shape=(2, 3), end=20), b"\0" * 20),
        r"'x' is F32 with shape \[2, 3\], which is 24 bytes, but its data_offsets \[0, 20\] span 20 bytes",
    ),
    (
        "shape_overflow",
        build({"x": {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 8]}}, b"\0" * 8),
        r"too large",
    ),
    (
        "overlap",
        build(f32("a", (2,)) | f32("b", (2,), begin=4), b"\0" * 12),
        r"\[4, 12\] for tensor 'b': expected it to begin at 8",
    ),
    (
        "gap",
        build(f32("a", (2,)) | f32("b", (2,), begin=12), b"\0" * 20),
        r"\[12, 20\] for tensor 'b': expected it to begin at 8",
    ),
    (
        "not_from_zero",
        build(f32("a", (2,), begin=4), b"\0" * 12),
        r"\[4, 12\] for tensor 'a': expected it to begin at 0",
    ),
    (
        "end_before_begin",
        build(
            f32("a", (0,), begin=0, end=0) | {"b": {"dtype": "F32", "shape": [0], "data_offsets": [8, 4]}}, b"\0" * 8
        ),
        r"\[8, 4\] for tensor 'b'",
    ),
    ("offsets_beyond_buffer", build(f32("a", (4,)), b"\0" * 8), r"truncated: the tensors need 16 bytes .* only 8"),
    ("trailing_bytes", build(f32("a", (2,)), b"\0" * 9), r"1 unexpected bytes after the last tensor"),
    (
        "sub_byte_dtype",
        build({"x": {"dtype": "F4", "shape": [3], "data_offsets": [0, 1]}}, b"\0"),
        r"does not fill a whole number of bytes",
    ),
    ("metadata_not_str", build({"__metadata__": {"a": 1}}), r"'__metadata__' must be an object of string values"),
    ("metadata_list", build({"__metadata__": ["a"]}), r"'__metadata__' must be an object of string values"),
    (
        "duplicate_field",
        build(None, raw_header=b'{"x":{"dtype":"F32","dtype":"F16","shape":[0],"data_offsets":[0,0]}}'),
        r"the key 'dtype' appears twice",
    ),
]


@pytest.mark.parametrize("name,data,message", CASES, ids=[c[0] for c in CASES])
def test_malformed_file_raises_a_clear_error(tmp_path, name, data, message):
    path = tmp_path / f"{name}.safetensors"
    overwrite(path, data)
    with pytest.raises(bm.SafetensorsError, match=message) as info:
        bm.load_file(path)
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith(f"[load_file] {path}: ")
    with pytest.raises(bm.SafetensorsError, match=message):
        bm.io.load_metadata(path)
    with pytest.raises(Exception):  # noqa: B017  (the official reader rejects it too, with its own error type)
        safetensors.torch.load_file(path)


# Where we are stricter than the official reader, on purpose: an ambiguous header is an error.
STRICTER = [
    (
        "duplicate_tensor",
        build(
            None,
            raw_header=b'{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
            b'"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}',
            data=b"\0" * 4,
        ),
        r"the key 'x' appears twice",
    ),
    (
        "empty_dim_beyond_int64",
        build({"x": {"dtype": "F32", "shape": [0, 2**63], "data_offsets": [0, 0]}}),
        r"has a size beyond 2\*\*63 - 1",
    ),
]


@pytest.mark.parametrize("name,data,message", STRICTER, ids=[c[0] for c in STRICTER])
def test_ambiguous_or_unrepresentable_headers_are_errors(tmp_path, name, data, message):
    path = tmp_path / f"{name}.safetensors"
    overwrite(path, data)
    with pytest.raises(bm.SafetensorsError, match=message):
        bm.load_file(path)


def test_lenient_where_the_official_reader_is(tmp_path):
    """What the official reader accepts and we must too: unknown fields, null metadata, whitespace,
    unpadded headers, tensors in any header order, empty tensors anywhere."""
    path = tmp_path / "ok.safetensors"
    header = (
        b' \n{"b":{"data_offsets":[8,16],"shape":[2],"dtype":"F32","extra":{"any":[1]}},'
        b'"__metadata__":null,"e":{"dtype":"I64","shape":[0,5],"data_offsets":[8,8]},'
        b'"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
    )
    data = struct.pack("<4f", 1, 2, 3, 4)
    overwrite(path, build(None, data, raw_header=header, pad=False))
    theirs = safetensors.torch.load_file(path)
    ours = bm.load_file(path)
    assert list(ours) == list(theirs) == ["a", "e", "b"]
    assert ours["a"].tolist() == [1, 2] and ours["b"].tolist() == [3, 4] and ours["e"].shape == (0, 5)
    assert bm.io.load_metadata(path) is None


# ------------------------------------------------------------------------- fuzzing a valid file


def _valid_file():
    tensors = {
        "w": bm.arange(6, dtype=bm.float32).reshape(2, 3),
        "b": bm.tensor([1.5, -2.0], dtype=bm.bfloat16),
        "n": bm.tensor([7, 8], dtype=bm.int64),
        "m": bm.tensor([True, False, True]),
        "s": bm.tensor(3, dtype=bm.int32),
        "h": bm.tensor([0.5], dtype=bm.float16),
    }
    return tensors, {"format": "pt"}


def _official(path):
    try:
        return safetensors.torch.load_file(path), None
    except Exception as e:  # noqa: BLE001  (any rejection by the official reader)
        return None, e


def _torch_bytes(t):
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""


def _check_agrees_with_official(path):
    """Ours raises only our errors, rejects what the official reader rejects, and otherwise loads the
    same tensors bit for bit."""
    theirs, their_error = _official(path)
    try:
        ours = bm.load_file(path)
    except bm.SafetensorsError as e:
        assert str(e).startswith(f"[load_file] {path}: ")
        assert their_error is not None or "appears twice" in str(e), f"we reject what the official reader accepts: {e}"
        return "rejected"
    except bm.UnsupportedError as e:  # a corrupted dtype naming one the format has and bessemer lacks (U32...)
        assert their_error is None and "which bessemer does not support" in str(e)
        return "unsupported"
    assert their_error is None, f"we accept what the official reader rejects ({their_error})"
    assert list(ours) == list(theirs)
    for k, v in ours.items():
        assert tuple(v.shape) == tuple(theirs[k].shape)
        assert bytes(_core._raw_bytes(v)) == _torch_bytes(theirs[k]), k
    return "loaded"


def test_every_truncation_is_an_error(tmp_path):
    tensors, meta = _valid_file()
    src = tmp_path / "valid.safetensors"
    bm.save_file(tensors, src, metadata=meta)
    data = src.read_bytes()
    path = tmp_path / "cut.safetensors"
    for k in range(len(data)):
        overwrite(path, data[:k])
        with pytest.raises(bm.SafetensorsError, match=rf"^\[load_file\] {path}: "):
            bm.load_file(path)
        assert _official(path)[1] is not None
    for extra in (b"\0", b" " * 8):
        overwrite(path, data + extra)
        with pytest.raises(bm.SafetensorsError, match="unexpected bytes after the last tensor"):
            bm.load_file(path)
    overwrite(path, data)
    assert _check_agrees_with_official(path) == "loaded"


def test_every_corrupted_header_byte(tmp_path):
    tensors, meta = _valid_file()
    src = tmp_path / "valid.safetensors"
    bm.save_file(tensors, src, metadata=meta)
    data = src.read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    path = tmp_path / "bad.safetensors"
    outcomes = {}
    for i in range(8 + n):
        for v in {0x00, 0x20, 0x22, 0x2C, 0x30, 0x31, 0x39, 0x5B, 0x5D, 0x7B, 0x7D, 0x80, 0xFF, data[i] ^ 1}:
            if v == data[i]:
                continue
            overwrite(path, data[:i] + bytes([v]) + data[i + 1 :])
            r = _check_agrees_with_official(path)
            outcomes[r] = outcomes.get(r, 0) + 1
    # The fuzz exercised both sides: many rejections, and corruptions that still make a valid file.
    assert outcomes["rejected"] > 1000 and outcomes.get("loaded", 0) > 10, outcomes


def test_random_header_mutations(tmp_path):
    """Several bytes at once, and insertions/deletions with the header length fixed up to match."""
    tensors, meta = _valid_file()
    src = tmp_path / "valid.safetensors"
    bm.save_file(tensors, src, metadata=meta)
    data = src.read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    header, body = bytearray(data[8 : 8 + n]), data[8 + n :]
    rng = np.random.default_rng(0)
    alphabet = b'{}[]":,0123456789 -eE.FIBUL_\\u'
    path = tmp_path / "m.safetensors"
    for _ in range(1500):
        h = bytearray(header)
        for _ in range(rng.integers(1, 4)):
            op = rng.integers(3)
            pos = int(rng.integers(len(h)))
            c = alphabet[rng.integers(len(alphabet))] if rng.random() < 0.8 else int(rng.integers(256))
            if op == 0:
                h[pos] = c
            elif op == 1:
                h.insert(pos, c)
            elif len(h) > 1:
                del h[pos]
        overwrite(path, struct.pack("<Q", len(h)) + bytes(h) + body)
        _check_agrees_with_official(path)


def test_corrupted_length_field(tmp_path):
    tensors, meta = _valid_file()
    src = tmp_path / "valid.safetensors"
    bm.save_file(tensors, src, metadata=meta)
    data = src.read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    path = tmp_path / "len.safetensors"
    for bad in {0, 1, 2, n - 8, n - 1, n + 1, n + 8, len(data) - 8, len(data) - 7, 2**31, 2**63, HUGE}:
        overwrite(path, struct.pack("<Q", bad) + data[8:])
        with pytest.raises(bm.SafetensorsError):
            bm.load_file(path)


def test_load_model_reports_malformed_files(tmp_path):
    path = tmp_path / "model.safetensors"
    overwrite(path, b"\x10\x00\x00\x00\x00\x00\x00\x00{")
    with pytest.raises(bm.SafetensorsError, match="header length 16 goes beyond the end of the file"):
        bm.load_model(bm.nn.Linear(2, 2), path)
