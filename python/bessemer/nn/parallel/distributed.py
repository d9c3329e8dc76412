"""DistributedDataParallel: one model per process, gradients averaged across the processes.

As torch's: at construction the ranks check that their models match and take rank 0's parameters
and buffers. The gradients are grouped in buckets (about ``bucket_cap_mb`` each, the first at most 1 MiB, in reverse
registration order, the order backward tends to produce them). A post-accumulate-grad hook on every
parameter marks it ready; when a bucket's last gradient is ready its all-reduce starts, while
backward goes on with the earlier layers. Buckets start in the same order on every rank (MPI pairs
collectives by order). A callback queued for the end of backward waits for them, divides by the
world size and writes each average into its parameter's ``.grad``.

``no_sync()`` skips the averaging (gradient accumulation: the next synced backward averages the
sum). A parameter that gets no gradient is an error naming it, unless ``find_unused_parameters=True``:
then it counts as zero on that rank, and a parameter no rank used keeps its ``.grad`` unchanged.
"""

from __future__ import annotations

import contextlib
import weakref
import zlib

import numpy as np

from ... import _core, autograd
from ...autograd import is_grad_enabled, no_grad
from ..module import Module

__all__ = ["DistributedDataParallel"]


class _Bucket:
    def __init__(self, params: list):
        self.params = params
        self.pending = len(params)
        self.flat = None
        self.work = None


class DistributedDataParallel(Module):
    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb: float | None = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False, init_sync: bool = True):
        super().__init__()
        from ... import distributed as dist

        if not isinstance(module, Module):
            raise TypeError("[DistributedDataParallel] module must be a bessemer.nn.Module, got "
                            f"{type(module).__name__}")
        self._dist = dist
        self._group = dist._resolve_group(process_group, "DistributedDataParallel", members_only=False)
        if not self._group.member:
            raise ValueError(f"[DistributedDataParallel] rank {dist.get_rank()} is not in process_group "
                             f"{self._group.global_ranks}: wrap the model only on the group's ranks")
        self.module = module
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        seen, named = set(), []
        for name, p in module.named_parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                named.append((name, p))
        self._names = {id(p): n for n, p in named}
        self._params = [p for _, p in named]
        self._verify_models_match()
        if init_sync:
            self._broadcast([p for p in module.parameters()] + [b for b in module.buffers() if b is not None])
        cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 2**20)
        self._buckets: list[_Bucket] = []
        self._bucket_of: dict[int, _Bucket] = {}
        current, size, key = [], 0, None
        for p in reversed(self._params):
            k = (str(p.device), p.dtype)
            nbytes = p.numel() * p.dtype.itemsize
            # The first bucket (the last layers) holds at most 1 MiB, as torch's: its all-reduce starts
            # early in backward instead of after most of it.
            limit = min(cap, 2**20) if not self._buckets else cap
            if current and (k != key or size + nbytes > limit):
                self._buckets.append(_Bucket(current))
                current, size = [], 0
            current.append(p)
            size, key = size + nbytes, k
        if current:
            self._buckets.append(_Bucket(current))
        for b in self._buckets:
            for p in b.params:
                self._bucket_of[id(p)] = b
        me = weakref.ref(self)  # the hooks live on the parameters; they must not keep this wrapper alive
        self._hooks = [p.register_post_accumulate_grad_hook(lambda p, me=me: (m := me()) and m._grad_ready(p))
                       for p in self._params]
        self._reset()

    # ---- construction ----
    def _verify_models_match(self) -> None:
        g = self._group
        shapes = ";".join(f"{tuple(p.shape)}{p.dtype}" for p in self._params)
        mine = np.array([len(self._params), sum(p.numel() for p in self._params), zlib.crc32(shapes.encode())],
                        dtype=np.int64)
        every = np.empty((g.size, 3), dtype=np.int64)
        g.wait("DistributedDataParallel", [g.meta_comm.Iallgather(mine, every)])
        if not (every == mine).all():
            rows = "; ".join(f"rank {g.global_rank(r)}: {every[r][0]} parameters, {every[r][1]} elements"
                             for r in range(g.size))
            raise self._dist.CollectiveMismatchError(
                f"[DistributedDataParallel] the ranks' models differ in their parameters' shapes or dtypes: {rows}")

    def _broadcast(self, tensors: list) -> None:
        """Rank 0's values into every rank's tensors, one broadcast per (device, dtype)."""
        groups: dict = {}
        for t in tensors:
            groups.setdefault((str(t.device), t.dtype), []).append(t)
        with no_grad():
            for ts in groups.values():
                flat = _core.cat([t.detach().reshape(-1) for t in ts], 0)
                self._dist.broadcast(flat, self._group.global_rank(0), group=self._group)
                off = 0
                for t in ts:
                    t.copy_(flat[off:off + t.numel()].reshape(tuple(t.shape)))
                    off += t.numel()

    # ---- forward ----
    def forward(self, *args, **kwargs):
        self._reset()
        self._sync = is_grad_enabled() and self.require_backward_grad_sync
        if self.broadcast_buffers and self.training:
            buffers = [b for b in self.module.buffers() if b is not None]
            if buffers:
                self._broadcast(buffers)
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes of forwards run inside leave ``.grad`` local (accumulating); the first synced
        backward after it averages the accumulated sums."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # ---- backward ----
    def _reset(self) -> None:
        self._sync = False
        self._queued = False
        self._next = 0  # the next bucket to start: buckets start in order on every rank
        self._ready: set[int] = set()
        for b in self._buckets:
            b.pending, b.flat, b.work = len(b.params), None, None

    def _grad_ready(self, p) -> None:
        if not self._sync or id(p) in self._ready or id(p) not in self._bucket_of:
            return
        if not self._queued:
            self._queued = True
            autograd.queue_callback(self._finish)
        self._ready.add(id(p))
        self._bucket_of[id(p)].pending -= 1
        while self._next < len(self._buckets) and self._buckets[self._next].pending == 0:
            self._start(self._buckets[self._next])
            self._next += 1
        for b in self._buckets[:self._next]:
            b.work.is_completed()  # MPI moves a non-blocking collective on when it is called

    def _start(self, b: _Bucket) -> None:
        parts = []
        with no_grad():
            for p in b.params:
                g = p.grad
                parts.append(g.reshape(-1) if g is not None else _core.full([p.numel()], 0, p.dtype, p.device))
            if self.find_unused_parameters:  # one count per parameter: how many ranks used it
                used = _core.from_numpy(np.array([float(id(p) in self._ready) for p in b.params], np.float32))
                parts.append(_core.to_device(_core.cast(used, b.params[0].dtype), b.params[0].device))
            b.flat = _core.cat(parts, 0)
        b.work = self._dist.all_reduce(b.flat, async_op=True, group=self._group, _checked=False)

    def _finish(self) -> None:
        missing = [p for p in self._params if id(p) not in self._ready]
        if missing and not self.find_unused_parameters:
            self._reset()
            names = ", ".join(self._names[id(p)] for p in missing[:10]) + (" ..." if len(missing) > 10 else "")
            raise RuntimeError(
                f"[DistributedDataParallel] on rank {self._group.rank}, {len(missing)} parameter(s) got no gradient in "
                f"this backward pass: {names}. Every parameter must take part in the loss on every rank, or pass "
                "find_unused_parameters=True to DistributedDataParallel (unused parameters then count as zero)")
        while self._next < len(self._buckets):  # buckets with unused parameters start now, in order
            self._start(self._buckets[self._next])
            self._next += 1
        try:
            with no_grad():
                for b in self._buckets:
                    b.work.wait()
                    b.flat.div_(float(self._group.size))
                    total = sum(p.numel() for p in b.params)
                    # With find_unused_parameters, the per-parameter use counts follow the gradients.
                    users = b.flat[total:].to(_core.dtype.float32).numpy() if self.find_unused_parameters else None
                    off = 0
                    for i, p in enumerate(b.params):
                        n = p.numel()
                        avg = b.flat[off:off + n].reshape(tuple(p.shape))
                        off += n
                        if users is not None and users[i] == 0:
                            continue  # no rank used it: its .grad stays as it was
                        if p.grad is None:
                            p.grad = avg.clone()
                        else:
                            p.grad.copy_(avg)
        finally:
            self._reset()

