"""Gradient clipping on the gradients' device: the total norm is a 0-d tensor and the scale
min(1, max_norm / (norm + 1e-6)) is applied as a tensor, so nothing is read back to the host
(except with error_if_nonfinite=True, which must look at the norm, as torch does).
"""

from __future__ import annotations

import math
import types
import warnings
from collections.abc import Iterable

from ... import _core
from ..._core import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]

_dt = _core.dtype
_HALF = (_dt.float16, _dt.bfloat16)


def _no_grad():
    import contextlib

    import bessemer

    ctx = getattr(bessemer, "no_grad", None)
    return ctx() if ctx is not None else contextlib.nullcontext()


def _grad(p):
    return getattr(p, "grad", None)  # a Parameter has no .grad until one is assigned (pre-autograd)


def _as_list(tensors) -> list:
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


def _vector_norm(x: Tensor, p: float) -> Tensor:
    """torch.linalg.vector_norm(x, p) over every element, as a 0-d tensor of x's dtype (the half
    types accumulate in float32 and round once)."""
    if not x.dtype.is_floating_point:
        raise TypeError(f"[clip_grad_norm_] expected floating point gradients, got {x.dtype.name}")
    acc = x.to(_dt.float32) if x.dtype in _HALF else x
    if x.numel() == 0:
        r = _core.full([], 0, acc.dtype, acc.device)
    elif p == math.inf:
        r = acc.abs().amax()
    elif p == -math.inf:
        r = acc.abs().amin()
    elif p == 0:
        r = (acc != 0).sum().to(acc.dtype)
    elif p == 1:
        r = acc.abs().sum()
    elif p == 2:
        r = (acc * acc).sum().sqrt()
    else:
        r = (acc.abs() ** p).sum() ** (1.0 / p)
    return r.to(x.dtype) if r.dtype != x.dtype else r


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """The norm of the norms of `tensors` (as if concatenated), a 0-d tensor on the first one's device."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return _core.full([], 0.0, _dt.float32, "cpu")
    with _no_grad():
        first_device = tensors[0].device
        norms = [_vector_norm(t, norm_type).to(first_device) for t in tensors]
        stacked = _core.stack(norms, 0)
        total_norm = _vector_norm(stacked, norm_type)
    if error_if_nonfinite and not math.isfinite(total_norm.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return total_norm


def _scale_(g: Tensor, factor: Tensor) -> None:
    mul_ = getattr(g, "mul_", None)
    if mul_ is not None:
        mul_(factor)
    else:
        _core.copy_(g, g * factor)


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    """Scale every gradient by min(1, max_norm / (total_norm + 1e-6)), in place, on its device."""
    parameters = _as_list(parameters)
    grads = [_grad(p) for p in parameters if _grad(p) is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    for g in grads:  # every gradient is written: refuse a read-only one before scaling any
        g._check_writable("clip_grad_norm_")
    with _no_grad():
        clip_coef = max_norm / (total_norm + 1e-6)
        clip_coef_clamped = clip_coef.clamp(max=1.0)
        per_device = {}
        for g in grads:
            dev = g.device
            if dev not in per_device:
                per_device[dev] = clip_coef_clamped.to(dev)
            _scale_(g, per_device[dev])


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None) -> Tensor:
    """Clip the gradients of `parameters` (a tensor or an iterable) so their total norm is at most
    max_norm; returns the total norm before clipping (a 0-d tensor, never read on the host)."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    grads = [_grad(p) for p in parameters if _grad(p) is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient to [-clip_value, clip_value], in place, on its device."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    elif not isinstance(parameters, Iterable):
        raise TypeError(f"[clip_grad_value_] expected a Tensor or an iterable of Tensors, got "
                        f"{type(parameters).__name__}")
    clip_value = float(clip_value)
    parameters = list(parameters)
    for p in parameters:  # every gradient is written: refuse a read-only one before clamping any
        if getattr(p, "grad", None) is not None:
            p.grad._check_writable("clip_grad_value_")
    with _no_grad():
        for p in parameters:
            g = getattr(p, "grad", None)
            if g is None:
                continue
            clamp_ = getattr(g, "clamp_", None)
            if clamp_ is not None:
                clamp_(min=-clip_value, max=clip_value)
            else:
                _core.copy_(g, g.clamp(-clip_value, clip_value))
