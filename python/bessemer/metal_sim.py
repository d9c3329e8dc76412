"""Settings of the Metal simulator (device ``"metal-sim"``) that help find kernel bugs.

The race detector is on unless ``BESSEMER_SIM_RACECHECK=0``: a data race on threadgroup or device
memory, or a read of threadgroup memory no thread has written, raises :class:`bessemer.RaceError`
naming the kernel, the memory, both threads and their source lines. Shuffle mode
(``BESSEMER_SIM_SHUFFLE=<seed>``) runs threadgroups, and the lanes of a group between barriers, in a
seeded random order instead of index order, so a kernel whose result depends on that order gives a
different result. See docs/simulator.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from . import _core

__all__ = ["race_check", "set_race_check", "set_shuffle", "shuffle", "shuffled"]


def race_check() -> bool:
    """Whether the simulator checks each dispatch for data races."""
    return _core.sim_race_check()


def set_race_check(on: bool) -> None:
    """Turns the race detector on or off for every later dispatch (all threads)."""
    _core.sim_set_race_check(bool(on))


def shuffle() -> int | None:
    """The seed of shuffle mode, or None when lanes run in index order."""
    return _core.sim_shuffle()


def set_shuffle(seed: int | None) -> None:
    """Runs later dispatches' lanes in an order drawn from ``seed`` (None: index order).

    Setting a seed restarts its sequence, so the same seed gives the same orders from here on.
    """
    if seed is not None and seed < 0:
        raise ValueError(f"[set_shuffle] seed must be non-negative, got {seed}")
    _core.sim_set_shuffle(seed)


@contextlib.contextmanager
def shuffled(seed: int | None) -> Iterator[None]:
    """``with shuffled(seed):`` runs the block in shuffle mode, then restores the previous mode."""
    previous = shuffle()
    set_shuffle(seed)
    try:
        yield
    finally:
        set_shuffle(previous)
