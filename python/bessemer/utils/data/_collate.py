"""default_collate / default_convert: torch.utils.data's rules for turning samples into batches.

default_collate stacks bessemer tensors (on their device) and NumPy arrays, turns Python and NumPy
numbers into 1-D tensors (floats: float64, ints: int64, bools: bool), keeps strings, and recurses
into dicts, namedtuples, tuples and lists (a batch of tuples becomes a list of batched fields).
"""

from __future__ import annotations

import collections.abc
import numbers

import numpy as np

from ... import _core, _ops
from ..._core import Tensor

__all__ = ["default_collate", "default_convert"]

_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def default_collate(batch):
    """Batch a list of samples: see the module docstring."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        shapes = {tuple(t.shape) for t in batch if isinstance(t, Tensor)}
        if len(shapes) > 1 or not all(isinstance(t, Tensor) for t in batch):
            raise RuntimeError(f"[default_collate] stack expects each tensor to be equal size, got shapes "
                               f"{sorted(shapes)}")
        return _core.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind not in "biuf":
            raise TypeError(_ERR.format(elem.dtype))
        if len({a.shape for a in batch}) > 1:
            raise RuntimeError(f"[default_collate] stack expects each array to be equal size, got shapes "
                               f"{sorted({a.shape for a in batch})}")
        return _ops.tensor(np.stack(batch))
    if isinstance(elem, np.generic):
        if elem.dtype.kind not in "biuf":
            raise TypeError(_ERR.format(elem.dtype))
        return _ops.tensor(np.array(batch))
    if isinstance(elem, bool):
        return _ops.tensor(np.array(batch, dtype=np.bool_))
    if isinstance(elem, float):
        return _ops.tensor(np.array(batch, dtype=np.float64), dtype=_core.dtype.float64)
    if isinstance(elem, numbers.Integral):
        return _ops.tensor(np.array(batch, dtype=np.int64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated) if not isinstance(elem, dict) or type(elem) is not dict else collated
        except TypeError:
            return collated
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(list(samples)) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(list(samples)) for samples in transposed]
        try:
            return type(elem)([default_collate(list(samples)) for samples in transposed])
        except TypeError:
            return [default_collate(list(samples)) for samples in transposed]
    raise TypeError(_ERR.format(type(elem)))


def default_convert(data):
    """Without batching (batch_size=None): NumPy arrays and numbers become tensors, containers recurse."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return _ops.tensor(data) if data.dtype.kind in "biuf" else data
    if isinstance(data, np.generic) and data.dtype.kind in "biuf":
        return _ops.tensor(data)
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        try:
            return type(data)(converted) if type(data) is not dict else converted
        except TypeError:
            return converted
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
