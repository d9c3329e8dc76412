"""Samplers: the order in which a DataLoader visits a map-style dataset.

RandomSampler draws from bessemer's Philox generators: a permutation is the stable argsort of n
float32 uniforms from the generator (identical bits on every device), so the same seed gives the
same order in any process and on any device, and the generator's state (get_state()) resumes it.
"""

from __future__ import annotations

import numbers

import numpy as np

from ...random import Generator, rand

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "BatchSampler"]


class Sampler:
    """Base class: iterates over dataset indices (or lists of indices, for batch samplers)."""

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _uniforms(n: int, generator: Generator | None) -> np.ndarray:
    """n float32 uniforms from `generator`, or from the default device's default generator (the
    stream bm.manual_seed() seeds and bm.get_rng_state() / set_rng_state() save and resume)."""
    return rand(n, generator=generator).numpy()


def randperm(n: int, generator: Generator | None = None) -> list[int]:
    """A random permutation of range(n) drawn from `generator` (default: the default device's generator)."""
    keys = _uniforms(n, generator)
    return np.argsort(keys, kind="stable").tolist()


class RandomSampler(Sampler):
    """Random order: a new permutation each epoch (replacement=False), or num_samples independent
    draws (replacement=True), from `generator` (a bessemer.Generator; default: the default device's)."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or isinstance(self.num_samples, bool) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")
        if generator is not None and not isinstance(generator, Generator):
            raise TypeError(f"[RandomSampler] generator must be a bessemer.Generator, got {type(generator).__name__}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        if self.replacement:
            for start in range(0, self.num_samples, 32):  # torch draws in chunks of 32 too
                count = min(32, self.num_samples - start)
                u = _uniforms(count, self.generator).astype(np.float64)
                yield from np.minimum((u * n).astype(np.int64), n - 1).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, self.generator)
            if self.num_samples % n:
                yield from randperm(n, self.generator)[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of `sampler` into lists of batch_size (the last one shorter unless drop_last)."""

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, numbers.Integral) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size

