"""bessemer.nn.functional: stateless layer functions with torch's signatures."""

from __future__ import annotations

from .. import _core, _ops
from .._core import Tensor


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = input @ weight.T + bias (weight: (out_features, in_features) or (in_features,)).

    A composite in the core (matmul, then the bias added in place): devices are checked first
    (DeviceMismatchError naming linear), inputs may have any strides and any number of leading dims."""
    return _core.linear(input, weight, bias)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0). inplace=True writes the result into input and returns it (in place, without a copy,
    when no autograd graph is recorded)."""
    return _core.relu_(input) if inplace else _core.relu(input)


softmax = _ops.softmax
log_softmax = _ops.log_softmax


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over windows of an (N, C, H, W) or (C, H, W) input; padding is -inf; NaN propagates.

    return_indices=True returns (values, indices): int64 indices into H * W of each input plane,
    as torch (the first maximum of a window; a NaN wins, the last one when several)."""
    if return_indices:
        return _core.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _core.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False):
    """max_pool2d(..., return_indices=True): (values, int64 indices)."""
    return _core.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


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
    return _core._silu_(input) if inplace else _core.silu(input)
# ---- dropout, embedding, losses (csrc/core/ops_nn_misc.cpp) ----


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    """torch's deprecated size_average/reduce arguments, when given, decide the reduction."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "none" if not reduce else "mean" if size_average else "sum"


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p).

    The mask comes from the device's default generator (Philox, the same bits on every backend):
    element i is kept iff the uniform from word i % 4 of counter block offset + i / 4 is >= p, in the
    input's logical element order. training=False returns the input; p == 0 gives a copy; p == 1
    multiplies by 0 (NaN stays NaN, as in torch)."""
    out = _core.dropout(input, float(p), bool(training))
    if inplace and out is not input:
        return input.copy_(out)
    return out


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """weight[input]: rows of weight (num_embeddings, dim) for int32/int64 indices of any shape.

    padding_idx (checked against num_embeddings) only matters for gradients, as in torch;
    scale_grad_by_freq and sparse likewise. An index outside [0, num_embeddings) raises IndexError."""
    if max_norm is not None:
        raise _core.UnsupportedError("[embedding] max_norm (renormalising weight rows in place) is not supported")
    return _core.embedding(input, weight, padding_idx)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """Negative log likelihood of class-index targets; input (C,), (N, C) or (N, C, d1, ...)."""
    return _core.nll_loss(input, target, weight, int(ignore_index), _legacy_reduction(size_average, reduce, reduction))


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over the class dim (1, or 0 for a single sample) then nll_loss, with torch's
    semantics: targets are class indices (int64, shape (N, d1, ...)) or class probabilities (the
    input's shape); 'mean' with weights divides by the summed weights of the targets not ignored."""
    return _core.cross_entropy(input, target, weight, int(ignore_index),
                               _legacy_reduction(size_average, reduce, reduction), float(label_smoothing))
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """2-D convolution over an (N, C, H, W) or (C, H, W) input, as torch.nn.functional.conv2d.

    weight: (out_channels, in_channels / groups, kH, kW); stride, padding, dilation: an int or an
    (h, w) pair; padding may also be 'valid' or 'same' (stride 1 only).
    """
    return _core.conv2d(input, weight, bias, stride, padding, dilation, groups)
