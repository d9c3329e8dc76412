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


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor:
    """Max over windows of an (N, C, H, W) or (C, H, W) input; padding is -inf; NaN propagates."""
    if return_indices:
        raise _core.UnsupportedError("[max_pool2d] return_indices=True is not supported yet")
    return _core.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Mean over windows; half types accumulate in float32."""
    return _core.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Mean over the windows that split H and W into output_size parts (None keeps a size)."""
    return _core.adaptive_avg_pool2d(input, output_size)
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    """torch.nn.functional.batch_norm over dim 1 of (N, C, ...). In training the batch statistics
    normalise, and running_mean / running_var (if given) are updated in place with momentum, the
    variance unbiased, as torch does. In eval the running statistics normalise."""
    return _core.batch_norm(input, running_mean, running_var, weight, bias, bool(training), float(momentum),
                            float(eps))


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalises over the trailing dims `normalized_shape` (an int or a sequence of ints)."""
    return _core.layer_norm(input, normalized_shape, weight, bias, float(eps))


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x) (approximate='none', the erf form) or its tanh approximation (approximate='tanh')."""
    if approximate == "none":
        return _core.gelu(input)
    if approximate == "tanh":
        return _core.gelu_tanh(input)
    raise ValueError(f"[gelu] approximate must be 'none' or 'tanh', got {approximate!r}")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x). inplace=True writes the result into input and returns it."""
    out = _core.silu(input)
    return _core.copy_(input, out) if inplace else out
