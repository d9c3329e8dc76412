"""Dropout: zeroes elements with probability p in training mode; the identity in eval mode."""

from __future__ import annotations

from .._core import Tensor
from . import functional as F
from .module import Module


class Dropout(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0 <= p <= 1:  # checked at construction, as torch does
            raise ValueError(f"[Dropout] dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
