"""DistributedSampler: each rank's share of a dataset, as torch.utils.data.DistributedSampler.

Every rank draws the same permutation (a bessemer.Generator on the CPU seeded with seed + epoch, so
identical on every rank and in every process), pads it by repeating its start until it divides by
the number of replicas (or drops the tail with drop_last=True), and takes every num_replicas-th
index from its rank on. Call ``set_epoch(e)`` before each epoch for a new order.
"""

from __future__ import annotations

import math

from ...random import Generator
from .sampler import Sampler, randperm

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist

            if not dist.is_initialized():
                raise RuntimeError("[DistributedSampler] num_replicas and rank default to the process group's, which "
                                   "is not initialized: call bessemer.distributed.init_process_group() or pass both")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if not isinstance(num_replicas, int) or num_replicas < 1:
            raise ValueError(f"[DistributedSampler] num_replicas must be a positive integer, got {num_replicas!r}")
        if not isinstance(rank, int) or not 0 <= rank < num_replicas:
            raise ValueError(f"[DistributedSampler] invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last, self.epoch = shuffle, seed, drop_last, 0
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = Generator("cpu").manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g)
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch the next iteration is for: with shuffle, each epoch gets its own order."""
        self.epoch = epoch
