"""Seeded, counter-based randomness (Philox4x32-10), identical on every backend.

Default seed policy: every device's default generator starts at seed 67280421310721 (torch's
default seed) with offset 0, in every process; `manual_seed(s)` re-seeds the default generators of
all devices. A draw takes the next range of Philox counters, so consecutive draws differ and the
same seed replays the same stream. Uniform bits are identical on CPU and Metal; normal values come
from the same Box-Muller formula (shaders/philox.h) on both.
"""

from __future__ import annotations

import builtins

from . import _core
from ._core import Tensor
from ._ops import _sizes

__all__ = ["Generator", "manual_seed", "initial_seed", "rand", "randn", "default_generator", "get_rng_state",
           "set_rng_state"]


class Generator:
    """A random stream on one device: bm.Generator("cpu").manual_seed(0)."""

    def __init__(self, device=None):
        self._g = _core._new_generator(device)

    @property
    def device(self):
        return self._g.device

    def manual_seed(self, seed: int) -> Generator:
        self._g.manual_seed(int(seed))
        return self

    def initial_seed(self) -> int:
        return self._g.initial_seed()

    def get_state(self) -> tuple[int, int]:
        """(seed, offset): where the stream is; set_state() resumes it exactly."""
        return (self._g.initial_seed(), self._g.get_offset())

    def set_state(self, state: tuple[int, int]) -> None:
        _set_raw_state(self._g, state)


def _set_raw_state(g, state) -> None:
    try:
        seed, offset = state
    except (TypeError, ValueError):
        raise TypeError(f"[set_state] expected a (seed, offset) pair from get_state(), got {state!r}") from None
    g.manual_seed(builtins.int(seed))
    g.set_offset(builtins.int(offset))


def get_rng_state(device=None) -> tuple[int, int]:
    """(seed, offset) of the default generator of `device` (default: the default device, whose
    generator also shuffles DataLoaders built without a generator)."""
    g = _core.default_generator(device)
    return (g.initial_seed(), g.get_offset())


def set_rng_state(new_state: tuple[int, int], device=None) -> None:
    """Resume the default generator of `device` at a state from get_rng_state()."""
    _set_raw_state(_core.default_generator(device), new_state)


def _raw(generator):
    return None if generator is None else generator._g


def manual_seed(seed: int) -> None:
    """Seed the default generator of every device."""
    _core.manual_seed(int(seed))


def initial_seed(device=None) -> int:
    return _core.default_generator(device).initial_seed()


def default_generator(device=None):
    return _core.default_generator(device)


def rand(*size, dtype=None, device=None, generator: Generator | None = None, requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1)."""
    device = device if device is not None or generator is None else generator.device
    t = _core.empty(_sizes(size, "rand"), dtype, device)
    t = _core.uniform_(t, 0.0, 1.0, _raw(generator))
    return t.requires_grad_() if requires_grad else t


def randn(*size, dtype=None, device=None, generator: Generator | None = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples."""
    device = device if device is not None or generator is None else generator.device
    t = _core.empty(_sizes(size, "randn"), dtype, device)
    t = _core.normal_(t, 0.0, 1.0, _raw(generator))
    return t.requires_grad_() if requires_grad else t
