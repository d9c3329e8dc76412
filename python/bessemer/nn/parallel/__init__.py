"""bessemer.nn.parallel: DistributedDataParallel (data-parallel training over bessemer.distributed)."""

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
