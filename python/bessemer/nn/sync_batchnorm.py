"""SyncBatchNorm: batch normalisation whose statistics span the whole data-parallel batch.

Under DistributedDataParallel each process sees its share of every batch; BatchNorm2d would
normalise each share by its own mean and variance, so N processes do not train as one process on
the whole batch would. SyncBatchNorm gathers every rank's count, mean and sum of squared deviations
(one all_gather, combined with Chan's parallel formula rather than sums of squares, which cancel),
and in backward all-reduces the two per-channel sums the input gradient needs. Without an
initialised process group, or in eval mode, it is BatchNorm over dim 1, as torch's.
"""

from __future__ import annotations

from .. import _core
from .._core import Tensor
from ..autograd.function import Function
from .normalization import BatchNorm2d

__all__ = ["SyncBatchNorm"]

_HALF = (_core.dtype.float16, _core.dtype.bfloat16)


def _world(group) -> int | None:
    """The group's size when a process group is initialised, else None."""
    from .. import distributed as dist

    if not dist.is_initialized():
        return None
    size = dist.get_world_size(group)
    if size < 0:
        raise ValueError(f"[SyncBatchNorm] rank {dist.get_rank()} is not in the layer's process_group")
    return size


def _per_channel(v: Tensor, ndim: int) -> Tensor:
    return v.reshape([1, -1] + [1] * (ndim - 2))


class _SyncBatchNormFunction(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, eps, factor, world, group):
        from .. import distributed as dist

        dims = [0] + list(range(2, x.ndim))
        c = x.shape[1]
        xs = x.float() if x.dtype in _HALF else x
        n = x.numel() // max(c, 1)
        mean = xs.sum(dims) / max(n, 1)  # a rank with no samples contributes count 0, not NaN
        m2 = ((xs - _per_channel(mean, x.ndim)) ** 2).sum(dims)
        stats = _core.cat([_core.full([1], float(n), xs.dtype, xs.device), mean, m2], 0)
        every = _core.empty([world, 2 * c + 1], xs.dtype, xs.device)
        dist.all_gather_into_tensor(every, stats, group=group)
        counts, means, m2s = every[:, :1], every[:, 1:c + 1], every[:, c + 1:]
        total = float(counts.sum().item())
        mean = (counts * means).sum(0) / total
        m2 = (m2s + counts * (means - mean) ** 2).sum(0)
        if total <= 1:
            raise ValueError(f"[SyncBatchNorm] expected more than 1 value per channel when training, got input size "
                             f"{list(x.shape)} on {world} process(es)")
        var = m2 / total
        invstd = (var + eps).rsqrt()
        xhat = (xs - _per_channel(mean, x.ndim)) * _per_channel(invstd, x.ndim)
        y = xhat
        if weight is not None:
            y = y * _per_channel(weight.to(xs.dtype), x.ndim)
        if bias is not None:
            y = y + _per_channel(bias.to(xs.dtype), x.ndim)
        if running_mean is not None:
            unbiased = m2 / (total - 1)
            running_mean.mul_(1 - factor).add_(mean.to(running_mean.dtype) * factor)
            running_var.mul_(1 - factor).add_(unbiased.to(running_var.dtype) * factor)
        ctx.save_for_backward(xhat, weight, invstd)
        ctx.total, ctx.group, ctx.dims, ctx.dtype = total, group, dims, x.dtype
        return y.to(x.dtype) if y.dtype != x.dtype else y

    @staticmethod
    def backward(ctx, grad):
        from .. import distributed as dist

        xhat, weight, invstd = ctx.saved_tensors
        g = grad.float() if grad.dtype in _HALF else grad
        ndim = xhat.ndim
        sum_dy = g.sum(ctx.dims)
        sum_dy_xhat = (g * xhat).sum(ctx.dims)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            both = _core.cat([sum_dy, sum_dy_xhat], 0)
            dist.all_reduce(both, group=ctx.group)  # every rank's samples moved the statistics this rank used
            c = sum_dy.shape[0]
            scale = invstd if weight is None else invstd * weight.to(invstd.dtype)
            gx = _per_channel(scale, ndim) * (g - _per_channel(both[:c] / ctx.total, ndim)
                                              - xhat * _per_channel(both[c:] / ctx.total, ndim))
            gx = gx.to(ctx.dtype)
        # The parameters' gradients are this rank's own: DistributedDataParallel averages them.
        if weight is not None and ctx.needs_input_grad[1]:
            gw = sum_dy_xhat.to(weight.dtype)
        if ctx.needs_input_grad[2]:
            gb = sum_dy.to(grad.dtype)
        return gx, gw, gb, None, None, None, None, None, None


class SyncBatchNorm(BatchNorm2d):
    """torch.nn.SyncBatchNorm: BatchNorm over dim 1 of an input of 2 or more dims, with statistics
    over every process of ``process_group`` in training (the default group when None; a group from
    ``bessemer.distributed.new_group``). Same arguments, buffers and state_dict keys as BatchNorm2d.
    ``convert_sync_batchnorm`` swaps a model's BatchNorm2d layers for it, keeping their parameters
    and buffers."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim < 2:
            raise ValueError(f"[SyncBatchNorm] expected at least 2D input (got {input.ndim}D input)")
        if input.shape[1] != self.num_features:
            raise ValueError(f"[SyncBatchNorm] expected {self.num_features} channels in dim 1, got input of shape "
                             f"{list(input.shape)}")
        world = _world(self.process_group) if self.training else None
        if world is None:  # eval, or no process group: BatchNorm over dim 1, BatchNorm2d's kernels
            if self.training and input.numel() <= input.shape[1]:
                raise ValueError(f"[SyncBatchNorm] expected more than 1 value per channel when training, got input "
                                 f"size {list(input.shape)} on 1 process")
            return self._batch_norm(input)
        factor, count = self._update_factor()
        track = (self.running_mean, self.running_var) if self.track_running_stats else (None, None)
        out = _SyncBatchNormFunction.apply(input, self.weight, self.bias, *track, self.eps, factor, world,
                                           self.process_group)
        if count:
            self._count_batch()
        return out

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm2d replaced by a SyncBatchNorm holding the same parameters and
        buffers (the same tensors, not copies); a BatchNorm2d passed itself comes back converted."""
        if isinstance(module, BatchNorm2d) and not isinstance(module, SyncBatchNorm):
            new = cls.__new__(cls)
            new.__dict__.update(module.__dict__)  # parameters, buffers, hooks, training flag, eps, momentum
            object.__setattr__(new, "process_group", process_group)
            return new
        for name, child in list(module.named_children()):
            converted = cls.convert_sync_batchnorm(child, process_group)
            if converted is not child:
                setattr(module, name, converted)
        return module

