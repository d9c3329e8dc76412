"""A tensor as the contiguous NumPy array an MPI call reads or writes, and the write back.

MPI takes a dense buffer of one of its datatypes. A CPU tensor that is dense already is handed over as
it is (zero copy: MPI writes the tensor's memory). Anything else is copied out in its logical element
order and, for an in-place collective, written back through the tensor's view, so elements outside a
strided view are never touched:
- a strided view (transposed, step-sliced, offset): copied, and written back through the view;
- a tensor on another device (metal, metal-sim, cuda): copied to the host and back;
- float16 and bfloat16: carried as float32 (MPI has no half types), so a reduction adds in float32
  and rounds once, which is at least as accurate as adding in half precision; bool as uint8.
"""

from __future__ import annotations

import numpy as np

from .. import _core

_dt = _core.dtype
_WIDENED = {_dt.float16: _dt.float32, _dt.bfloat16: _dt.float32, _dt.bool: _dt.uint8}
SUPPORTED = (_dt.float32, _dt.float64, _dt.float16, _dt.bfloat16, _dt.int8, _dt.uint8, _dt.int16, _dt.int32,
              _dt.int64, _dt.bool)


def check_tensor(op: str, t, name: str = "tensor", *, writable: bool) -> None:
    if not isinstance(t, _core.Tensor):
        raise TypeError(f"[{op}] {name} must be a bessemer Tensor, got {type(t).__name__}")
    if t.dtype not in SUPPORTED:
        raise TypeError(f"[{op}] {name} has dtype {t.dtype}, which the collectives do not carry")
    if writable and any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape)):
        raise ValueError(f"[{op}] {name} is a broadcast view (a zero stride in {tuple(t.stride())}): several of its "
                         "elements share memory, so it cannot receive a result; pass a tensor of its own")


def _dense_cpu_view(t) -> np.ndarray | None:
    """The tensor's own memory as a C-contiguous array, when MPI can use it directly."""
    if t.device.type != "cpu" or t.dtype in _WIDENED or not t.is_contiguous():
        return None
    a = t.numpy()
    return a if a.flags.c_contiguous and a.flags.writeable else None


class Buffer:
    """``array``: what MPI reads and writes. ``finish(scale)``: writes the result back into the tensor
    (when it was a copy), dividing by ``scale`` first when given (ReduceOp.AVG)."""

    def __init__(self, t, *, read: bool = True):
        self.tensor = t
        view = _dense_cpu_view(t)
        self.zero_copy = view is not None
        if view is not None:
            self.array = view.reshape(-1)
        elif read:
            src = t if t.dtype not in _WIDENED else t.to(_WIDENED[t.dtype])
            self.array = np.ascontiguousarray(src.numpy()).reshape(-1)
        else:
            self.array = np.empty(t.numel(), dtype=carrier_numpy_dtype(t.dtype))

    def finish(self, scale: float | None = None) -> None:
        if scale is not None:
            self.array /= scale
        if not self.zero_copy:
            write_back(self.tensor, self.array)


# The NumPy dtype each dtype travels as (float16/bfloat16 as float32, bool as uint8). int64 is long long,
# as Tensor.numpy() gives it: MPI tells long from long long, and both ends of a transfer must agree.
_CARRIER = {_dt.float32: np.float32, _dt.float64: np.float64, _dt.float16: np.float32, _dt.bfloat16: np.float32,
            _dt.int8: np.int8, _dt.uint8: np.uint8, _dt.int16: np.int16, _dt.int32: np.int32, _dt.int64: np.longlong,
            _dt.bool: np.uint8}


def carrier_numpy_dtype(dtype) -> np.dtype:
    """The NumPy dtype a tensor of ``dtype`` travels as."""
    return np.dtype(_CARRIER[dtype])


def write_back(t, flat: np.ndarray) -> None:
    """t[...] = flat (t's logical element order), through t's view and on t's device."""
    src = _core.from_numpy(np.ascontiguousarray(flat).reshape(tuple(t.shape)))
    if src.dtype != t.dtype:
        src = _core.cast(src, t.dtype)
    if t.device.type != "cpu":
        src = _core.to_device(src, t.device)
    t.copy_(src)
