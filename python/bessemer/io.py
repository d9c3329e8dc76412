"""Saving and loading tensors in the safetensors format.

A safetensors file is: 8 bytes holding N (unsigned, little-endian), N bytes of UTF-8 JSON header
``{"__metadata__": {str: str}, name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}}``
padded with spaces to a multiple of 8, then the tensors' bytes (little-endian, C order), offsets
counting from the end of the header. We write what the official ``safetensors`` library writes
(same tensor order, same JSON, same padding), so files are byte-identical to its output (metadata
keys aside: we sort them, it writes them in hash-map order). We read with its validation rules: a
file either loads completely or raises SafetensorsError (a ValueError) naming the file and what is
wrong with it. Where the official reader is ambiguous we are stricter: a key repeated in a JSON
object (it keeps the last) and sizes beyond 2**63 - 1 in an empty tensor's shape are errors.

The format is written here rather than through the ``safetensors`` package so that bfloat16 and
tensors on any device go straight between the file and the device's memory, one copy each way.
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import secrets
import struct
import sys
from collections.abc import Callable, Mapping

from . import _core
from ._core import Tensor, UnsupportedError

__all__ = ["SafetensorsError", "save_file", "load_file", "load_metadata", "save_model", "load_model"]

# The official reader refuses larger headers; we refuse to write them.
MAX_HEADER_SIZE = 100_000_000
_U64_MAX = 2**64 - 1

# Every dtype the format defines, in the official library's order (its `Dtype` enum), with its
# width in bits. Tensors are written in descending order of this rank, then by name.
_FORMAT_DTYPES = [
    ("BOOL", 8), ("F4", 4), ("F6_E2M3", 6), ("F6_E3M2", 6), ("U8", 8), ("I8", 8), ("F8_E5M2", 8),
    ("F8_E4M3", 8), ("F8_E8M0", 8), ("F8_E4M3FNUZ", 8), ("F8_E5M2FNUZ", 8), ("I16", 16), ("U16", 16),
    ("F16", 16), ("BF16", 16), ("I32", 32), ("U32", 32), ("F32", 32), ("C64", 64), ("F64", 64),
    ("I64", 64), ("U64", 64),
]  # fmt: skip
_RANK = {name: i for i, (name, _) in enumerate(_FORMAT_DTYPES)}
_BITS = dict(_FORMAT_DTYPES)

_TO_BM = {
    "BOOL": _core.dtype.bool,
    "I8": _core.dtype.int8,
    "U8": _core.dtype.uint8,
    "I16": _core.dtype.int16,
    "I32": _core.dtype.int32,
    "I64": _core.dtype.int64,
    "F16": _core.dtype.float16,
    "BF16": _core.dtype.bfloat16,
    "F32": _core.dtype.float32,
    "F64": _core.dtype.float64,
}
_FROM_BM = {v: k for k, v in _TO_BM.items()}

if sys.byteorder != "little":  # pragma: no cover  (every platform bessemer builds on is little-endian)
    raise ImportError("bessemer.io: the safetensors format is little-endian; big-endian hosts are not supported")


class SafetensorsError(ValueError):
    """A file that is not a valid safetensors file (truncated, corrupt header, bad offsets...)."""


# ---------------------------------------------------------------------------------------------- save


def _check_tensors(tensors) -> list[tuple[str, Tensor]]:
    if not isinstance(tensors, Mapping):
        raise TypeError(f"[save_file] expected a dict of name -> Tensor, got {type(tensors).__name__}")
    items = []
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"[save_file] tensor names must be str, got {type(name).__name__} {name!r}")
        if not isinstance(t, Tensor):
            raise TypeError(f"[save_file] tensors[{name!r}] must be a bessemer Tensor, got {type(t).__name__}")
        if name == "__metadata__":
            raise ValueError("[save_file] '__metadata__' is reserved by the format and cannot name a tensor")
        try:
            name.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(f"[save_file] tensor name {name!r} cannot be encoded as UTF-8: {e}") from None
        items.append((name, t))
    return items


def _check_metadata(metadata) -> dict[str, str] | None:
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        raise TypeError(f"[save_file] metadata must be a dict of str -> str, got {type(metadata).__name__}")
    for k, v in metadata.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"[save_file] metadata must map str -> str, got {k!r}: {v!r}")
    # Sorted, so equal maps give identical files (the official writer's order is a hash map's).
    return dict(sorted(metadata.items()))


def _header_bytes(items: list[tuple[str, Tensor]], metadata: dict[str, str] | None) -> bytes:
    header: dict = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset = 0
    for name, t in items:
        n = t.numel() * t.element_size()
        header[name] = {"dtype": _FROM_BM[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + n]}
        offset += n
    # Compact separators and raw UTF-8: what serde_json writes in the official library.
    try:
        text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"[save_file] metadata cannot be encoded as UTF-8: {e}") from None
    text += b" " * (-len(text) % 8)  # pad so the data starts 8-byte aligned
    if len(text) > MAX_HEADER_SIZE:
        raise ValueError(
            f"[save_file] the header would be {len(text)} bytes; readers refuse more than {MAX_HEADER_SIZE}"
        )
    return struct.pack("<Q", len(text)) + text


def _save_error(code: int, message: str) -> OSError:
    """The OSError subclass of ``code`` (FileNotFoundError...) whose str() is ``message`` (which
    names the path); errno is set. (With strerror or filename set too, str() would begin
    "[Errno 2]" instead of "[op]".)"""
    cls = type(OSError(code, ""))
    e = cls(message)
    e.errno = code
    return e


def _atomic_write(path, write: Callable, op: str = "save_file") -> None:
    """Write to a new file beside `path`, then rename it over `path`: readers see the old file or
    the complete new one, never a partial file. A failure to create or rename the file (no such
    folder, no permission, `path` is a folder) names `path` as the user gave it, never the
    temporary file."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        what = "is not a folder" if os.path.exists(directory) else "does not exist"
        code = errno.ENOTDIR if os.path.exists(directory) else errno.ENOENT
        raise _save_error(code, f"[{op}] cannot save to {path!r}: the folder {directory!r} {what}")
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    # O_EXCL: never follow or clobber someone else's file; 0o666 lets the umask decide permissions
    # as for any newly created file.
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as e:
        raise _save_error(e.errno, f"[{op}] cannot save to {path!r}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.replace(tmp, path)
        except OSError as e:
            raise _save_error(e.errno, f"[{op}] cannot save to {path!r}: {e.strerror}") from None
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save_file(tensors: Mapping[str, Tensor], path, metadata: Mapping[str, str] | None = None) -> None:
    """Write `tensors` (name -> Tensor, on any device, any layout) to `path` in the safetensors format.

    Each tensor is written as its logical contents in C order; views and tensors sharing memory are
    each written on their own. `metadata` is an optional str -> str map stored in the header.
    """
    items = _check_tensors(tensors)
    meta = _check_metadata(metadata)
    items.sort(key=lambda it: (-_RANK[_FROM_BM[it[1].dtype]], it[0]))
    head = _header_bytes(items, meta)

    def write(f):
        f.write(head)
        # One tensor at a time: at most one host copy of a device tensor exists at once.
        for _, t in items:
            f.write(_core._raw_bytes(t))

    _atomic_write(path, write)


# ---------------------------------------------------------------------------------------------- load


class _Entry:
    __slots__ = ("name", "code", "shape", "begin", "end")

    def __init__(self, name, code, shape, begin, end):
        self.name, self.code, self.shape, self.begin, self.end = name, code, shape, begin, end


def _fail(path, what: str):
    raise SafetensorsError(f"[load_file] {path}: {what}")


def _is_size(v) -> bool:
    return type(v) is int and 0 <= v <= _U64_MAX  # bool is an int subclass: excluded by `type(v) is int`


_I64_MAX = 2**63 - 1


def _no_duplicates(path):
    def hook(pairs):
        d = {}
        for k, v in pairs:
            if k in d:
                _fail(path, f"invalid header: the key {k!r} appears twice")
            d[k] = v
        return d

    return hook


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def _parse_header(path, raw: bytes) -> tuple[list[_Entry], dict[str, str] | None]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        _fail(path, f"the header is not valid UTF-8 ({e})")
    try:
        header = json.loads(text, object_pairs_hook=_no_duplicates(path), parse_constant=_reject_constant)
    except SafetensorsError:
        raise
    except RecursionError:
        _fail(path, "the header is not valid JSON (nested too deeply)")
    except ValueError as e:
        _fail(path, f"the header is not valid JSON ({e})")
    if not isinstance(header, dict):
        _fail(path, f"the header must be a JSON object, got {type(header).__name__}")
    metadata = header.pop("__metadata__", None)
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
            _fail(path, "invalid header: '__metadata__' must be an object of string values")
    entries = []
    for name, info in header.items():
        if not isinstance(info, dict):
            _fail(path, f"invalid header: the entry for tensor {name!r} must be an object")
        for key in ("dtype", "shape", "data_offsets"):
            if key not in info:
                _fail(path, f"invalid header: tensor {name!r} has no {key!r}")
        code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(code, str) or code not in _RANK:
            _fail(path, f"tensor {name!r} has unknown dtype {code!r} (the format defines {', '.join(_RANK)})")
        if not isinstance(shape, list) or not all(_is_size(s) for s in shape):
            _fail(
                path,
                f"invalid header: the shape of tensor {name!r} must be a list of non-negative integers, got {shape!r}",
            )
        if not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_size(o) for o in offsets):
            _fail(
                path,
                f"invalid header: data_offsets of tensor {name!r} must be [begin, end] (non-negative "
                f"integers), got {offsets!r}",
            )
        if any(s > _I64_MAX for s in shape):
            _fail(path, f"the shape {shape} of tensor {name!r} has a size beyond 2**63 - 1")
        entries.append(_Entry(name, code, shape, offsets[0], offsets[1]))
    return entries, metadata


def _validate(path, entries: list[_Entry]) -> int:
    """The official rules: sorted by offsets, the tensors tile the data buffer from 0 with no gap or
    overlap, and each spans exactly numel * itemsize bytes. Returns the end of the buffer."""
    entries.sort(key=lambda e: (e.begin, e.end))
    start = 0
    for e in entries:
        if e.begin != start or e.end < e.begin:
            _fail(
                path,
                f"invalid data_offsets [{e.begin}, {e.end}] for tensor {e.name!r}: expected it to begin at "
                f"{start}, where the previous tensor ends (tensors must cover the data without gaps or overlaps)",
            )
        start = e.end
        numel = 1
        for s in e.shape:
            numel *= s
        nbits = numel * _BITS[e.code]
        if numel > _U64_MAX or nbits > _U64_MAX:  # where the official reader's 64-bit arithmetic overflows
            _fail(path, f"tensor {e.name!r} with shape {e.shape} is too large")
        if nbits % 8:
            _fail(path, f"tensor {e.name!r} ({e.code}, shape {e.shape}) does not fill a whole number of bytes")
        if e.end - e.begin != nbits // 8:
            _fail(
                path,
                f"tensor {e.name!r} is {e.code} with shape {e.shape}, which is {nbits // 8} bytes, but its "
                f"data_offsets [{e.begin}, {e.end}] span {e.end - e.begin} bytes",
            )
    return start


def _read_header(f, path: str) -> tuple[int, list[_Entry], dict[str, str] | None]:
    """Check everything but the tensor bytes. Returns (header length, entries in file order, metadata)."""
    size = os.fstat(f.fileno()).st_size
    if size < 8:
        _fail(path, f"the file is {size} bytes, too short to hold the 8-byte header length")
    (n,) = struct.unpack("<Q", f.read(8))
    if n > MAX_HEADER_SIZE:
        _fail(path, f"the header length {n} is larger than the {MAX_HEADER_SIZE}-byte limit")
    if 8 + n > size:
        _fail(
            path,
            f"the header length {n} goes beyond the end of the file ({size} bytes): the file is truncated "
            "or not a safetensors file",
        )
    raw = f.read(n)
    if len(raw) != n:
        _fail(path, "the file changed while it was being read")
    entries, metadata = _parse_header(path, raw)
    end = _validate(path, entries)
    if 8 + n + end > size:
        _fail(
            path,
            f"the file is truncated: the tensors need {end} bytes after the header, but only {size - 8 - n} are there",
        )
    if 8 + n + end < size:
        _fail(
            path,
            f"{size - 8 - n - end} unexpected bytes after the last tensor (the header does not cover the whole file)",
        )
    return n, entries, metadata


def _read(path, device_for: Callable[[str], object]) -> dict[str, Tensor]:
    """Validate the whole file, then copy each tensor once, from the mapped file to its device."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        n, entries, _ = _read_header(f, path)
        targets = {}
        for e in entries:
            device = _core.device(device_for(e.name))
            if e.code not in _TO_BM:
                raise UnsupportedError(
                    f"[load_file] {path}: tensor {e.name!r} has dtype {e.code}, which bessemer "
                    f"does not support (supported: {', '.join(_TO_BM)})"
                )
            if not _core._dtype_supported(_TO_BM[e.code], device):
                raise UnsupportedError(
                    f"[load_file] {path}: tensor {e.name!r} is {_TO_BM[e.code]}, which device "
                    f"{device} does not support; load it on cpu and convert it first"
                )
            targets[e.name] = device
        mapped = None
        try:  # the file holds at least the 8-byte length, so there is always something to map
            buf = mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # not mappable (some file systems): one read instead
            f.seek(0)
            buf = f.read()
        try:
            return {
                e.name: _core._from_bytes(buf, 8 + n + e.begin, e.shape, _TO_BM[e.code], targets[e.name])
                for e in entries
            }
        finally:
            if mapped is not None:
                mapped.close()


def load_file(path, device=None) -> dict[str, Tensor]:
    """Read a safetensors file: name -> Tensor on `device` (default: cpu), in file order.

    Invalid files raise SafetensorsError (a ValueError); a dtype the device cannot hold (float64 on
    Metal, or a format dtype bessemer lacks such as U16) raises bessemer.UnsupportedError naming the
    tensor. Nothing is copied until the whole header has been checked.
    """
    target = _core.device("cpu" if device is None else device)
    return _read(path, lambda _name: target)


def load_metadata(path) -> dict[str, str] | None:
    """The '__metadata__' map of a safetensors file (None when it has none), after checking its header."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        return _read_header(f, path)[2]


# ---------------------------------------------------------------------------------------------- models


def save_model(model, path, metadata: Mapping[str, str] | None = None) -> None:
    """save_file(model.state_dict(), path, metadata): parameters and persistent buffers by name."""
    save_file(model.state_dict(), path, metadata)


def load_model(model, path, strict: bool = True):
    """Load a file written by save_model (or any safetensors file with matching keys) into `model`.

    Each tensor is read straight onto the device of the model tensor it replaces, then copied in by
    `model.load_state_dict(..., strict)`. Returns (missing_keys, unexpected_keys).
    """
    own = model.state_dict()
    state = _read(path, lambda name: own[name].device if name in own else "cpu")
    return model.load_state_dict(state, strict=strict)
