"""Datasets: map-style (Dataset, TensorDataset, Subset) and iterable-style (IterableDataset)."""

from __future__ import annotations

from ..._core import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset"]


class Dataset:
    """A map-style dataset: subclasses implement __getitem__(index) and usually __len__()."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        raise TypeError("[Dataset] concatenating datasets is not supported")


class IterableDataset(Dataset):
    """An iterable-style dataset: subclasses implement __iter__()."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class TensorDataset(Dataset):
    """Samples are tuples of tensors[i][index]; every tensor has the same first dim."""

    def __init__(self, *tensors: Tensor) -> None:
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"[TensorDataset] expected Tensors, got {type(t).__name__}")
        if tensors and any(t.ndim == 0 for t in tensors):
            raise ValueError("[TensorDataset] tensors must have at least one dim (the sample dim)")
        if not all(tensors[0].shape[0] == t.shape[0] for t in tensors):
            raise ValueError("Size mismatch between tensors: first dims are "
                             + ", ".join(str(t.shape[0]) for t in tensors))
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of `dataset` at `indices`."""

    def __init__(self, dataset, indices) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return [self.dataset[self.indices[i]] for i in idx]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)
