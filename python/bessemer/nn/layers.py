"""Basic layers: Linear, activations, Flatten, Identity, Sequential."""

from __future__ import annotations

import math
from collections import OrderedDict

from .. import _core
from .._core import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class Identity(Module):
    def forward(self, input: Tensor) -> Tensor:
        return input


def _weight_and_bias(module: Module, weight_shape: list, out_features: int, bias: bool, device, dtype) -> None:
    """Registers `weight` (uninitialised) and `bias` (or None), as torch's Linear and Conv layers do."""
    module.weight = Parameter(_core.empty(weight_shape, dtype, device))
    if bias:
        module.bias = Parameter(_core.empty([out_features], dtype, device))
    else:
        module.register_parameter("bias", None)


class Linear(Module):
    """y = x @ W.T + b, initialised as torch does: W, b ~ U(-1/sqrt(in), 1/sqrt(in))."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        _weight_and_bias(self, [out_features, in_features], out_features, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class ReLU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Sequential(Module):
    """Sequential(m0, m1, ...) or Sequential(OrderedDict(name=m)); keys are "0", "1", ... as in torch."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                if not isinstance(m, Module):
                    raise TypeError(f"[Sequential] argument {i} is a {type(m).__name__}, not a Module")
                self.add_module(str(i), m)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return mods[idx]

    def __setitem__(self, idx: int, module: Module) -> None:
        """Replaces the idx-th layer in place (torch's ``seq[i] = m``): its key and position stay."""
        if not isinstance(module, Module):
            raise TypeError(f"[Sequential] can only assign a Module to an index, got {type(module).__name__}")
        keys = list(self._modules)
        if not -len(keys) <= idx < len(keys):
            raise IndexError(f"[Sequential] index {idx} is out of range for {len(keys)} layers")
        setattr(self, keys[idx], module)

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input
