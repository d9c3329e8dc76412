"""Normalisation layers: BatchNorm2d and LayerNorm, with torch's arguments, defaults,
initialisation (weight 1, bias 0, running_mean 0, running_var 1) and state_dict keys."""

from __future__ import annotations

from .. import _core
from .._core import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class BatchNorm2d(Module):
    """Batch normalisation over C of (N, C, H, W).

    Training normalises with the batch's statistics and, with track_running_stats, updates the
    running_mean / running_var buffers (momentum; momentum=None: the cumulative average over
    num_batches_tracked batches). Eval normalises with the running statistics, or with the batch's
    when there are none (track_running_stats=False)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(_core.empty([num_features], dtype, device))
            if bias:
                self.bias = Parameter(_core.empty([num_features], dtype, device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _core.empty([num_features], dtype, device))
            self.register_buffer("running_var", _core.empty([num_features], dtype, device))
            self.register_buffer("num_batches_tracked", _core.full([], 0, _core.dtype.int64, device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim != 4:
            raise ValueError(f"[BatchNorm2d] expected 4D input (got {input.ndim}D input)")
        return self._batch_norm(input)

    def _update_factor(self) -> tuple[float, bool]:
        """(the running statistics' update factor, whether this call counts a batch in
        num_batches_tracked): momentum, or with momentum=None the cumulative average's 1/(n+1)."""
        factor = 0.0 if self.momentum is None else self.momentum
        count = self.training and self.track_running_stats and self.num_batches_tracked is not None
        if count:  # written after the call: refused before it, so a refusal changes nothing
            self.num_batches_tracked._check_writable(f"{type(self).__name__} (num_batches_tracked)")
        if count and self.momentum is None:  # cumulative moving average over the batches seen
            factor = 1.0 / float(self.num_batches_tracked.item() + 1)
        return factor, count

    def _count_batch(self) -> None:
        # after the call, so a call that raises leaves the counter alone
        _core.copy_(self.num_batches_tracked, self.num_batches_tracked + 1)

    def _batch_norm(self, input: Tensor) -> Tensor:
        """F.batch_norm over dim 1 of input (any number of dims) with this layer's state."""
        factor, count = self._update_factor()
        # Batch statistics in training, and in eval when there are no running statistics.
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        out = F.batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                           self.weight, self.bias, use_batch, factor, self.eps)
        if count:
            self._count_batch()
        return out

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class LayerNorm(Module):
    """Normalises over the trailing dims `normalized_shape`; weight (ones) and bias (zeros) of that
    shape when elementwise_affine (bias=False drops the bias)."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_core.empty(list(self.normalized_shape), dtype, device))
            if bias:
                self.bias = Parameter(_core.empty(list(self.normalized_shape), dtype, device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
