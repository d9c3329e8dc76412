"""Parameter: a Tensor that a Module registers as learnable."""

from __future__ import annotations

from .._core import Tensor


class Parameter(Tensor):
    """A tensor registered by a Module as a parameter. Shares storage with `data`."""

    def __init__(self, data: Tensor, requires_grad: bool = True):
        if not isinstance(data, Tensor):
            raise TypeError(f"[Parameter] expected a Tensor, got {type(data).__name__}")
        super().__init__(data)
        self.requires_grad = requires_grad

    def __repr__(self) -> str:
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__
