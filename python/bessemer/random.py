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

__all__ = ["Generator", "manual_seed", "initial_seed", "rand", "randn", "default_generator"]


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
        return (self._g.initial_seed(), self._g.get_offset())

    def set_state(self, state: tuple[int, int]) -> None:
        seed, offset = state
        self._g.manual_seed(seed)
        self._g.set_offset(offset)


def _raw(generator):
    return None if generator is None else generator._g


def manual_seed(seed: int) -> None:
    """Seed the default generator of every device."""
    _core.manual_seed(int(seed))


def initial_seed(device=None) -> int:
    return _core.default_generator(device).initial_seed()


def default_generator(device=None):
    return _core.default_generator(device)


def _sizes(size):
    if len(size) == 1 and not isinstance(size[0], builtins.int):
        return list(size[0])
    return list(size)


def rand(*size, dtype=None, device=None, generator: Generator | None = None, requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1)."""
    t = _core.empty(_sizes(size), dtype, device if device is not None or generator is None else generator.device)
    t = _core.uniform_(t, 0.0, 1.0, _raw(generator))
    return t.requires_grad_() if requires_grad else t


def randn(*size, dtype=None, device=None, generator: Generator | None = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples."""
    t = _core.empty(_sizes(size), dtype, device if device is not None or generator is None else generator.device)
    t = _core.normal_(t, 0.0, 1.0, _raw(generator))
    return t.requires_grad_() if requires_grad else t
