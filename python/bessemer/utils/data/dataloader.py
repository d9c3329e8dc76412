"""DataLoader: batches of a dataset, in sampler order, collated (torch.utils.data.DataLoader's
arguments and checks). Loading runs in the calling process; num_workers > 0 is accepted with a
warning and loads in-process too (the batches are the same)."""

from __future__ import annotations

import warnings

from ...random import Generator
from ._collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader"]


class _InfiniteConstantSampler:
    """The sampler of an IterableDataset: None forever (the dataset yields its own samples)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over `dataset` in batches of batch_size (None: single samples, converted only)."""

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None, sampler=None,
                 batch_sampler=None, num_workers: int = 0, collate_fn=None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn=None, multiprocessing_context=None,
                 generator: Generator | None = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "") -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if num_workers > 0:
            warnings.warn("[DataLoader] worker processes are not supported yet: loading in the main process "
                          f"(num_workers={num_workers} ignored; the batches are the same)", UserWarning, stacklevel=2)
        if generator is not None and not isinstance(generator, Generator):
            raise TypeError(f"[DataLoader] generator must be a bessemer.Generator, got {type(generator).__name__}")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers

        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.__initialized = True

    def __setattr__(self, attr, val):
        if self.__dict__.get("_DataLoader__initialized") and attr in (
                "batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    def _fetch(self, indices):
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems is not None:
            return getitems(indices)
        return [self.dataset[i] for i in indices]

    def __iter__(self):
        if self._is_iterable:
            yield from self._iter_iterable()
            return
        if self._auto_collation:
            for indices in self.batch_sampler:
                yield self.collate_fn(self._fetch(indices))
        else:
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])

    def _iter_iterable(self):
        if not self._auto_collation:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._is_iterable:
            n = len(self.dataset)  # TypeError when the dataset has no length, as in torch
            if self.batch_size is not None:
                return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        if self._auto_collation:
            return len(self.batch_sampler)
        return len(self.sampler)
