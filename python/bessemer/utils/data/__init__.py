"""bessemer.utils.data: torch.utils.data's Dataset, TensorDataset, DataLoader and samplers.

Shuffling draws from bessemer's Philox generators (bessemer.Generator), so the same seed gives
the same order in any process and on any device.
"""

from ._collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import Dataset, IterableDataset, Subset, TensorDataset
from .distributed import DistributedSampler
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "DataLoader", "Sampler", "SequentialSampler",
           "RandomSampler", "BatchSampler", "DistributedSampler", "default_collate", "default_convert"]
