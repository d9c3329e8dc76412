"""bessemer.nn.functional: stateless layer functions with torch's signatures."""

from __future__ import annotations

from .. import _core, _ops
from .._core import Tensor


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = input @ weight.T + bias (weight: (out_features, in_features))."""
    out = _core.matmul(input, weight.transpose(0, 1) if weight.ndim == 2 else weight)
    return out if bias is None else out + bias


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return _core.relu(input)


softmax = _ops.softmax
log_softmax = _ops.log_softmax


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """2-D convolution over an (N, C, H, W) or (C, H, W) input, as torch.nn.functional.conv2d.

    weight: (out_channels, in_channels / groups, kH, kW); stride, padding, dilation: an int or an
    (h, w) pair; padding may also be 'valid' or 'same' (stride 1 only).
    """
    return _core.conv2d(input, weight, bias, stride, padding, dilation, groups)
