"""Convolution layers: Conv2d (torch's arguments, attributes, initialisation and state_dict keys)."""

from __future__ import annotations

import math

from .._core import Tensor, UnsupportedError
from . import functional as F
from . import init
from .layers import _weight_and_bias
from .module import Module


def _pair(name: str, v) -> tuple[int, int]:
    if isinstance(v, int) and not isinstance(v, bool):
        return (v, v)
    t = tuple(v)
    if len(t) == 1:
        return (t[0], t[0])
    if len(t) != 2 or not all(isinstance(i, int) and not isinstance(i, bool) for i in t):
        raise ValueError(f"[Conv2d] {name} must be an int or a pair of ints, got {v!r}")
    return t


class Conv2d(Module):
    """y = conv2d(x, weight, bias) with weight (out_channels, in_channels / groups, kH, kW).

    Initialised as torch does: weight by kaiming_uniform_(a=sqrt(5)), bias ~ U(-1/sqrt(fan_in),
    1/sqrt(fan_in)) with fan_in = in_channels / groups * kH * kW. Only padding_mode='zeros' exists.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError(f"[Conv2d] groups must be a positive integer, got {groups}")
        if in_channels % groups != 0:
            raise ValueError(f"[Conv2d] in_channels ({in_channels}) must be divisible by groups ({groups})")
        if out_channels % groups != 0:
            raise ValueError(f"[Conv2d] out_channels ({out_channels}) must be divisible by groups ({groups})")
        if padding_mode in ("reflect", "replicate", "circular"):
            raise UnsupportedError(f"[Conv2d] padding_mode='{padding_mode}' is not supported; only 'zeros' is")
        if padding_mode != "zeros":
            raise ValueError(f"[Conv2d] padding_mode must be 'zeros', got '{padding_mode}'")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _pair("kernel_size", kernel_size)
        self.stride = _pair("stride", stride)
        self.dilation = _pair("dilation", dilation)
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"[Conv2d] padding must be 'valid', 'same', an int or a pair of ints, got '{padding}'")
            if padding == "same" and self.stride != (1, 1):
                raise ValueError("[Conv2d] padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = _pair("padding", padding)
        self.padding_mode = padding_mode
        self.output_padding = (0, 0)
        self.transposed = False
        _weight_and_bias(self, [out_channels, in_channels // groups, *self.kernel_size], out_channels, bias, device,
                         dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s
