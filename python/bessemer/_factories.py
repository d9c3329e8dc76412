"""Factory functions with torch's signatures: the *_like family, eye, linspace, logspace, randint and
randperm. Argument handling only; the values come from core ops (fill, arange, comparisons, the
randint kernel) or from the core's randperm, so every device computes them the same way."""

from __future__ import annotations

import builtins
import operator

import numpy as np

from . import _core, _ops
from ._core import Tensor

_dt = _core.dtype

__all__ = ["zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like", "eye", "linspace",
           "logspace", "randint", "randperm"]


def _grad(t: Tensor, requires_grad: bool) -> Tensor:
    return t.requires_grad_() if requires_grad else t


def _like(input: Tensor, dtype, device):
    if not isinstance(input, Tensor):
        raise TypeError(f"[like] expected a Tensor as input, got {type(input).__name__}")
    return (input.dtype if dtype is None else dtype), (input.device if device is None else device)


def full_like(input: Tensor, fill_value, *, dtype=None, device=None, requires_grad: bool = False,
              memory_format=None) -> Tensor:
    """A tensor of input's shape (and dtype and device, unless given) filled with fill_value."""
    dt, dev = _like(input, dtype, device)
    return _grad(_core.full(list(input.shape), fill_value, dt, dev), requires_grad)


def zeros_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    return full_like(input, 0, dtype=dtype, device=device, requires_grad=requires_grad)


def ones_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    return full_like(input, 1, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_like(input: Tensor, *, dtype=None, device=None, requires_grad: bool = False, memory_format=None) -> Tensor:
    dt, dev = _like(input, dtype, device)
    return _grad(_core.empty(list(input.shape), dt, dev), requires_grad)


def _random_like(name, fill, input, dtype, device, generator, requires_grad):
    dt, dev = _like(input, dtype, device)
    if not dt.is_floating_point:
        raise TypeError(f"[{name}] expected a floating point dtype, got {dt!r} (pass dtype=, e.g. bessemer.float32)")
    t = fill(_core.empty(list(input.shape), dt, dev), generator)
    return _grad(t, requires_grad)


def rand_like(input: Tensor, *, dtype=None, device=None, generator=None, requires_grad: bool = False,
              memory_format=None) -> Tensor:
    """Uniform [0, 1) samples shaped like input, from the output device's generator (or ``generator``)."""
    return _random_like("rand_like", lambda t, g: _core.uniform_(t, 0.0, 1.0, _raw(g)), input, dtype, device,
                        generator, requires_grad)


def randn_like(input: Tensor, *, dtype=None, device=None, generator=None, requires_grad: bool = False,
               memory_format=None) -> Tensor:
    """Standard normal samples shaped like input."""
    return _random_like("randn_like", lambda t, g: _core.normal_(t, 0.0, 1.0, _raw(g)), input, dtype, device,
                        generator, requires_grad)


def _raw(generator):
    return None if generator is None else generator._g


def _count(name: str, what: str, v) -> int:
    try:
        n = operator.index(v)
    except TypeError:
        raise TypeError(f"[{name}] {what} must be an int, got {type(v).__name__}") from None
    if n < 0:
        raise ValueError(f"[{name}] {what} must be non-negative, got {n}")
    return n


def eye(n, m=None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """The n x m (default n x n) identity: ones where row == column (a comparison of two aranges)."""
    n = _count("eye", "n", n)
    m = n if m is None else _count("eye", "m", m)
    dt = _core.get_default_dtype() if dtype is None else dtype
    rows = _core.arange(0, n, 1, _dt.int64, device).reshape(n, 1)
    cols = _core.arange(0, m, 1, _dt.int64, device).reshape(1, m)
    return _grad((rows == cols).to(dt), requires_grad)


def _check_number(name: str, what: str, v):
    if isinstance(v, Tensor):
        if v.numel() != 1:
            raise ValueError(f"[{name}] {what} must be a number or a 1-element tensor")
        v = v.item()
    if isinstance(v, builtins.bool) or not isinstance(v, (builtins.int, builtins.float, np.integer, np.floating)):
        raise TypeError(f"[{name}] {what} must be a real number, got {type(v).__name__}")
    return v


def _linspace_in(name: str, start, end, steps: int, compute, device) -> Tensor:
    """torch's linspace formula in dtype `compute`: step = (end - start) / (steps - 1) rounded to it,
    start + step * i for the first half, end - step * (steps - 1 - i) for the rest (so both ends
    are exact)."""
    if steps == 1:
        return _core.full([1], start, compute, device)
    idx = _core.arange(0, steps, 1, compute, device)
    if compute == _dt.float64:
        step = (np.float64(end) - np.float64(start)) / np.float64(steps - 1)
    else:  # the step as torch computes it in float32: from the bounds rounded to float32
        step = (np.float32(end) - np.float32(start)) / np.float32(steps - 1)
    lo = idx * step + start
    hi = end - (steps - 1 - idx) * step
    return _ops.where(idx < steps // 2, lo, hi)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``steps`` values evenly spaced from start to end inclusive (torch.linspace). Floating dtypes
    compute in float32 (float64 for float64) with torch's formula; integer dtypes truncate those
    values toward zero, as torch does."""
    start, end = _check_number("linspace", "start", start), _check_number("linspace", "end", end)
    steps = _count("linspace", "steps", steps)
    dt = _core.get_default_dtype() if dtype is None else dtype
    if dt == _dt.bool:
        raise TypeError("[linspace] dtype bool is not supported")
    if steps == 0:
        return _grad(_core.empty([0], dt, device), requires_grad)
    compute = _dt.float64 if dt == _dt.float64 else _dt.float32
    return _grad(_linspace_in("linspace", start, end, steps, compute, device).to(dt), requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """base ** linspace(start, end, steps) (torch.logspace); computed in float32 (float64 for
    float64) on every device."""
    start, end = _check_number("logspace", "start", start), _check_number("logspace", "end", end)
    base = _check_number("logspace", "base", base)
    steps = _count("logspace", "steps", steps)
    dt = _core.get_default_dtype() if dtype is None else dtype
    if dt == _dt.bool:
        raise TypeError("[logspace] dtype bool is not supported")
    if steps == 0:
        return _grad(_core.empty([0], dt, device), requires_grad)
    compute = _dt.float64 if dt == _dt.float64 else _dt.float32
    exps = _linspace_in("logspace", start, end, steps, compute, device)
    return _grad(_ops.pow(builtins.float(base), exps).to(dt), requires_grad)


def _size_list(name: str, size) -> list[int]:
    if isinstance(size, (builtins.int, np.integer)):
        return [builtins.int(size)]
    try:
        return [operator.index(s) for s in size]
    except TypeError:
        raise TypeError(f"[{name}] size must be a tuple of ints, got {size!r}") from None


def _int_arg(name: str, what: str, v) -> int:
    if isinstance(v, Tensor):
        v = v.item()
    if isinstance(v, builtins.float) and v.is_integer():
        return builtins.int(v)
    try:
        v = operator.index(v)
    except TypeError:
        raise TypeError(f"[{name}] {what} must be an int, got {type(v).__name__}") from None
    if not -(2**63) <= v < 2**63:
        raise RuntimeError(f"[{name}] {what} = {v} does not fit in 64 bits (int64)")
    return v


def randint(*args, size=None, low=None, high=None, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """randint(high, size) or randint(low, high, size): integers uniform in [low, high) (low = 0 by
    default), int64 unless ``dtype`` is given, from the Philox stream of the output device's
    generator (or ``generator``): one seed gives the same values on every device."""
    args = list(args)
    if size is None:
        if not args:
            raise TypeError("[randint] missing the size argument")
        size = args.pop()
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    elif args:
        raise TypeError(f"[randint] expected (high, size) or (low, high, size), got {len(args) + 1} positional "
                        "arguments")
    if high is None:
        raise TypeError("[randint] missing the high argument")
    low = 0 if low is None else _int_arg("randint", "low", low)
    high = _int_arg("randint", "high", high)
    dev = device if device is not None or generator is None else generator.device
    t = _core.empty(_size_list("randint", size), _dt.int64 if dtype is None else dtype, dev)
    return _grad(_core.randint_(t, low, high, _raw(generator)), requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1 (int64 unless ``dtype`` is given); the same for one seed on
    every device."""
    n = _count("randperm", "n", n)
    return _grad(_core.randperm(n, dtype, device, _raw(generator)), requires_grad)
