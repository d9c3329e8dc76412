"""Memory accounting and the memory limit of a device (see docs/memory.md).

The counting lives in the C++ core, one account per device, fed by the device's allocator; these
are torch-style conveniences on top: ``memory_stats`` as in ``torch.cuda.memory_stats`` and
``set_memory_limit`` as in MLX's ``mx.set_memory_limit`` (returns the previous limit).
"""

from __future__ import annotations

from . import _core

memory_stats = _core.memory_stats
reset_peak_memory_stats = _core.reset_peak_memory_stats
empty_cache = _core.empty_cache
set_memory_limit = _core.set_memory_limit


def memory_allocated(device=None) -> int:
    """Bytes held by live tensors (and kernel scratch) on ``device``: memory_stats' allocated_bytes.current."""
    return _core.memory_stats(device)["allocated_bytes.current"]


def max_memory_allocated(device=None) -> int:
    """The peak of memory_allocated since start-up or the last reset_peak_memory_stats."""
    return _core.memory_stats(device)["allocated_bytes.peak"]


def memory_reserved(device=None) -> int:
    """Bytes the allocator holds from the system: in use plus cached (reserved_bytes.current)."""
    return _core.memory_stats(device)["reserved_bytes.current"]


def get_memory_limit(device=None) -> int | None:
    """The limit set by set_memory_limit, or None when there is none."""
    return _core.memory_stats(device)["limit_bytes"] or None
