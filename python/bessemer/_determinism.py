"""torch.use_deterministic_algorithms with torch's names and meanings (see docs/determinism.md)."""

from __future__ import annotations

import builtins

from . import _core

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Make every op deterministic or fail: with ``mode=True`` an op whose kernel on the device
    is not deterministic raises ``RuntimeError`` naming the op (with ``warn_only=True`` it warns
    instead, ``UserWarning``, and runs). Every bessemer kernel is deterministic today, so no op
    raises; the flag guards future kernels. The setting is process-wide, as in torch."""
    if not isinstance(mode, builtins.bool):
        raise TypeError(f"[use_deterministic_algorithms] mode must be a bool, got {type(mode).__name__}")
    if not isinstance(warn_only, builtins.bool):
        raise TypeError(f"[use_deterministic_algorithms] warn_only must be a bool, got {type(warn_only).__name__}")
    _core._set_deterministic_algorithms(mode, warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _core.are_deterministic_algorithms_enabled()


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _core.is_deterministic_algorithms_warn_only_enabled()
