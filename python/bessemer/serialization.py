"""bm.save / bm.load: checkpoints of any picklable object holding tensors (model and optimizer
state_dicts, schedulers, generator states, Python numbers), as torch.save / torch.load.

Tensors pickle as (NumPy array of their values, dtype, device): exact for every dtype (bfloat16
travels as float32, which holds it exactly) and independent of the tensor's layout. Like
torch.load, bm.load unpickles: load only files you trust. For tensors alone, prefer the
safetensors format (bm.save_file / bm.load_file), which runs no code.
"""

from __future__ import annotations

import os
import pickle

import numpy as np

from . import _core
from .io import _atomic_write

_dt = _core.dtype


def _rebuild_tensor(values: np.ndarray, dtype_name: str, device: str, requires_grad: bool = False):
    dtype = _core.dtype_from_name(dtype_name)
    values = np.array(values, copy=True, order="C")  # (np.ascontiguousarray would make 0-d arrays 1-d)
    t = _core._from_numpy_copy(values, _core.device("cpu"))
    if t.dtype != dtype:
        t = _core.cast(t, dtype)
    if device != "cpu":
        t = _core.to_device(t, device)
    return t.requires_grad_() if requires_grad else t


def _reduce_tensor(t: _core.Tensor):
    src = t.detach()
    if src.dtype == _dt.bfloat16:
        src = _core.cast(src, _dt.float32)
    values = np.array(_core.to_device(src, "cpu").numpy(), copy=True)
    return _rebuild_tensor, (values, t.dtype.name, str(t.device), bool(t.requires_grad and t.is_leaf))


_core.Tensor.__reduce_ex__ = lambda self, protocol: _reduce_tensor(self)


def save(obj, f) -> None:
    """Pickle obj (tensors included) to the path or binary file f; a path is written atomically."""
    if hasattr(f, "write"):
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
        return
    # The safetensors writer's atomic write: errors name `f`, never the temporary file.
    _atomic_write(os.fspath(f), lambda fh: pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL), "save")


def load(f, map_location=None):
    """Unpickle what bm.save wrote. map_location (a device or device name) moves every tensor there."""
    if hasattr(f, "read"):
        obj = pickle.load(f)
    else:
        with open(os.fspath(f), "rb") as fh:
            obj = pickle.load(fh)
    if map_location is None:
        return obj
    return _map(obj, map_location)


def _map(obj, device):
    if isinstance(obj, _core.Tensor):
        moved = obj.detach().to(device)
        return moved.requires_grad_() if obj.requires_grad else moved
    if isinstance(obj, dict):
        return type(obj)((k, _map(v, device)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(v, device) for v in obj)
    return obj
