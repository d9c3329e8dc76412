"""Argument checks shared by the optimizers."""

from __future__ import annotations


def check_common_flags(name: str, *, differentiable: bool = False, capturable: bool = False) -> None:
    """torch's differentiable / capturable modes do not exist here: a clear error instead of a silent no-op.
    foreach and fused are accepted and ignored (every step here is already one fused kernel per parameter)."""
    if differentiable:
        raise ValueError(f"[{name}] differentiable=True is not supported by bessemer's optimizers")
    if capturable:
        raise ValueError(f"[{name}] capturable=True is not supported by bessemer's optimizers (the step count stays "
                         "on the cpu, as torch keeps it by default)")
