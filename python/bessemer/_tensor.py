"""Torch-style Tensor methods that are argument conveniences over module functions."""

from __future__ import annotations

import builtins

import numpy as np

from . import _core, _ops, _reduce_ops
from ._core import Device, Tensor

_dt = _core.dtype


def _to(self: Tensor, *args, dtype=None, device=None, copy: bool = False) -> Tensor:
    """t.to(device), t.to(dtype), t.to(device, dtype), t.to(other_tensor)."""
    for a in args:
        if isinstance(a, _dt):
            dtype = a
        elif isinstance(a, (str, Device)):
            device = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        else:
            raise TypeError(f"[to] expected a device, a dtype or a tensor, got {type(a).__name__}")
    out = self
    if device is not None:
        out = _core.to_device(out, device)
    if dtype is not None and dtype != out.dtype:
        out = _core.cast(out, dtype)
    if copy and out is self:
        out = self.clone()
    return out


# torch's legacy type strings: "torch.FloatTensor" on the CPU; the same names under "bessemer."
# (with the device type for other devices, as torch.cuda.FloatTensor).
_TYPE_NAMES = {
    _dt.float32: "FloatTensor", _dt.float64: "DoubleTensor", _dt.float16: "HalfTensor",
    _dt.bfloat16: "BFloat16Tensor", _dt.int8: "CharTensor", _dt.uint8: "ByteTensor", _dt.int16: "ShortTensor",
    _dt.int32: "IntTensor", _dt.int64: "LongTensor", _dt.bool: "BoolTensor",
}  # fmt: skip


def _type(self: Tensor, dtype=None):
    """x.type(): the type string ("bessemer.FloatTensor"); x.type(dtype): x cast to dtype (x itself when it
    already has it). A type string of either form is accepted too, as torch does."""
    if dtype is None:
        dev = self.device.type
        return "bessemer." + ("" if dev == "cpu" else dev.replace("-", "_") + ".") + _TYPE_NAMES[self.dtype]
    if isinstance(dtype, str):
        name = dtype.rsplit(".", 1)[-1]
        match = [d for d, n in _TYPE_NAMES.items() if n == name]
        if not match:
            raise TypeError(f"[type] invalid type: {dtype!r}")
        dtype = match[0]
    if not isinstance(dtype, _dt):
        raise TypeError(f"[type] expected a dtype or a type string, got {type(dtype).__name__}")
    return _to(self, dtype)


def _repr(self: Tensor) -> str:
    extras = []
    if self.device.type != "cpu":
        extras.append(f"device='{self.device}'")
    if self.dtype not in (_core.get_default_dtype(), _dt.int64, _dt.bool):  # torch's rule
        extras.append(f"dtype={self.dtype!r}")
    shown = self if self.dtype != _dt.bfloat16 else self.to(_dt.float32)
    arr = shown.numpy()
    body = np.array2string(arr, separator=", ", prefix="tensor(", threshold=1000)
    if arr.size == 0:
        extras.insert(0, f"size={tuple(self.shape)}")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"


def _len(self: Tensor) -> int:
    if self.ndim == 0:
        raise TypeError("[len] len() of a 0-d tensor")
    return self.shape[0]


def _iter(self: Tensor):
    if self.ndim == 0:
        raise TypeError("[iter] iteration over a 0-d tensor")
    for i in range(self.shape[0]):
        yield self[i]


def _bool(self: Tensor) -> bool:
    if self.numel() != 1:
        raise ValueError(
            f"[bool] the truth value of a tensor with {self.numel()} elements is ambiguous; use .any() or .all()"
        )
    return builtins.bool(self.item())


def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


_METHODS = {
    "to": _to,
    "__repr__": _repr,
    "__str__": _repr,
    "__len__": _len,
    "__iter__": _iter,
    "__bool__": _bool,
    "__float__": lambda self: builtins.float(self.item()),
    "__int__": lambda self: builtins.int(self.item()),
    "__index__": lambda self: builtins.int(self.item()) if not self.dtype.is_floating_point else _no_index(),
    # torch's conversion methods: the same tensor when it already has the dtype, else a cast copy.
    "float": lambda self: _to(self, _dt.float32),
    "double": lambda self: _to(self, _dt.float64),
    "half": lambda self: _to(self, _dt.float16),
    "bfloat16": lambda self: _to(self, _dt.bfloat16),
    "long": lambda self: _to(self, _dt.int64),
    "int": lambda self: _to(self, _dt.int32),
    "short": lambda self: _to(self, _dt.int16),
    "char": lambda self: _to(self, _dt.int8),
    "byte": lambda self: _to(self, _dt.uint8),
    "bool": lambda self: _to(self, _dt.bool),
    "type": lambda self, dtype=None, non_blocking=False: _type(self, dtype),
    "cpu": lambda self: _to(self, "cpu"),
    "T": property(lambda self: self.permute(*reversed(range(self.ndim)))),
    "mT": property(lambda self: self.transpose(-2, -1)),
}


def _backward(self: Tensor, gradient=None, retain_graph=None, create_graph: bool = False, inputs=None) -> None:
    """Accumulates the gradient of this tensor into the leaves' .grad (torch's Tensor.backward)."""
    from . import autograd

    autograd.backward(self, gradient, retain_graph, create_graph, inputs)


_METHODS["backward"] = _backward


class RemovableHandle:
    """What a hook registration returns: ``remove()`` unregisters the hook (a second call does nothing)."""

    def __init__(self, tensor: Tensor, hook_id: int):
        self._tensor, self._id = tensor, hook_id

    def remove(self) -> None:
        if self._tensor is not None:
            _core._remove_post_accumulate_hook(self._tensor, self._id)
            self._tensor = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _register_post_accumulate_grad_hook(self: Tensor, hook) -> RemovableHandle:
    """Runs ``hook(self)`` each time backward has added into this leaf's ``.grad`` (torch's method of this
    name); returns a handle whose ``remove()`` unregisters it. An exception from the hook ends the
    backward pass and reaches its caller."""
    if not callable(hook):
        raise TypeError(f"[register_post_accumulate_grad_hook] the hook must be callable, got {type(hook).__name__}")
    return RemovableHandle(self, _core._add_post_accumulate_hook(self, hook))


_METHODS["register_post_accumulate_grad_hook"] = _register_post_accumulate_grad_hook


def _no_index():
    raise TypeError("[index] only integer tensors of a single element can be converted to an index")


for _name in ("sum", "mean", "var", "amax", "amin", "argmax", "argmin", "max", "min", "softmax", "log_softmax",
              "clamp", "matmul", "exp", "log", "sqrt", "rsqrt", "abs", "neg", "sin", "cos", "tanh", "sigmoid",
              "relu", "maximum", "minimum", "pow", "add", "sub", "mul", "div", "eq", "ne", "lt", "le", "gt", "ge"):
    _METHODS[_name] = _method(getattr(_ops, _name))
_METHODS["clip"] = _METHODS["clamp"]
for _name in ("floor_divide", "remainder", "any", "all", "index_select", "nonzero", "index_add", "index_copy"):
    _METHODS[_name] = _method(getattr(_ops, _name))

for _name in _reduce_ops.METHODS:
    _METHODS[_name] = _method(getattr(_reduce_ops, _name))


def _index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """In place: self's slices at ``index`` along ``dim`` += ``alpha * source``'s."""
    self._check_writable("index_add_")  # before the out-of-place sum is computed
    return _core.copy_(self, _ops.index_add(self, dim, index, source, alpha=alpha))


def _index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """In place: self's slices at ``index`` along ``dim`` := ``source``'s (the last duplicate wins)."""
    return _core.index_copy_(self, dim, index, source)


_METHODS["index_add_"] = _index_add_
_METHODS["index_copy_"] = _index_copy_

for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)
