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
