"""The process group: MPI's world communicator, the timeout, the metadata check and the work handle.

Every collective is posted as MPI's non-blocking form and waited for by polling, so no wait lasts
past the group's timeout: a rank that died or never came makes the others raise
``DistBackendError`` instead of hanging. After such a failure the group is marked broken: later
collectives raise at once, and MPI is not finalized at exit (finalizing waits for every rank).

The metadata check (on unless ``BESSEMER_DIST_CHECK=0``): before a collective moves data, the ranks
exchange (collective, dtype, shape, root, reduce op) on a separate communicator; when they differ,
every rank raises naming the op and each rank's tensor, instead of MPI reducing mismatched buffers.
"""

from __future__ import annotations

import atexit
import functools
import os
import sys
import threading
import time
import warnings

import numpy as np

from ._buffers import SUPPORTED as _DTYPES  # the codes of dtypes in the metadata check

_OPS = ("all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor", "barrier",
        "send", "recv", "ddp_shapes", "reduce", "gather", "scatter", "new_group", "all_gather_object", "gather_object",
        "broadcast_object_list", "scatter_object_list")
REDUCE_NAMES = ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR")
_MAX_DIMS = 8
_META = 4 + _MAX_DIMS + 3  # op, dtype, ndim, numel, shape..., device kind, extra (root or reduce op), extra2
_DEVICE_KINDS = ("cpu", "metal", "metal-sim", "cuda")


class DistError(RuntimeError):
    """An error of bessemer.distributed."""


class DistBackendError(DistError):
    """A collective failed: a rank died, timed out, or MPI reported an error."""


class CollectiveMismatchError(DistError, ValueError):
    """The ranks called a collective with different ops, dtypes or shapes."""


def _mpi():
    import mpi4py

    # Finalizing waits for every rank; after a failure that would hang, so it is done here, when healthy.
    mpi4py.rc.finalize = False
    from mpi4py import MPI

    return MPI


def describe(meta: np.ndarray) -> str:
    op, dtype, ndim, numel = (int(x) for x in meta[:4])
    name = _OPS[op] if 0 <= op < len(_OPS) else f"op {op}"
    if name == "barrier":
        return "barrier"
    shape = tuple(int(x) for x in meta[4:4 + ndim]) if ndim <= _MAX_DIMS else f"({numel} elements)"
    text = name if dtype < 0 else f"{name} of {_DTYPES[dtype] if dtype < len(_DTYPES) else dtype} {shape}"
    kind = int(meta[-3])
    if 0 <= kind < len(_DEVICE_KINDS):
        text += f" on {_DEVICE_KINDS[kind]}"
    extra = int(meta[-2])
    if name in ("broadcast", "scatter", "broadcast_object_list", "scatter_object_list"):
        text += f" from rank {extra}"
        if name == "broadcast_object_list":
            text += f" of a list of {int(meta[-1])}"
    elif name in ("reduce", "gather", "gather_object"):
        text += f" to rank {extra}"
    elif name == "all_gather_object":
        text += f" into a list of {extra}"
        if name == "reduce" and 0 <= int(meta[-1]) < len(REDUCE_NAMES):
            text += f" with ReduceOp.{REDUCE_NAMES[int(meta[-1])]}"
    elif name in ("all_reduce", "reduce_scatter_tensor") and 0 <= extra < len(REDUCE_NAMES):
        text += f" with ReduceOp.{REDUCE_NAMES[extra]}"
    return text


class Group:
    """The default group (MPI's world), or a subgroup of it made by ``new_group``: its own
    communicators, over the listed global ranks in increasing order (``global_ranks``; None for the
    world, whose ranks are the global ones). On a rank outside a subgroup ``member`` is False."""

    global_ranks: list[int] | None = None
    member = True

    @classmethod
    def split(cls, parent: Group, ranks: list[int], timeout: float, backend: str, use_nccl: bool) -> Group:
        """A subgroup of ``parent`` (the world): collective over every rank of it, members or not."""
        g = cls.__new__(cls)
        g.MPI, g.parent = parent.MPI, parent
        g.global_ranks, g.member = list(ranks), parent.rank in ranks
        color = 0 if g.member else parent.MPI.UNDEFINED
        key = ranks.index(parent.rank) if g.member else 0
        comm, meta = parent.comm.Split(color, key), parent.meta_comm.Split(color, key)
        g.comm, g.meta_comm = (comm, meta) if g.member else (None, None)
        g.rank, g.size = (comm.Get_rank(), comm.Get_size()) if g.member else (-1, -1)
        g.backend, g.timeout = backend, timeout
        g.use_nccl, g.nccl = use_nccl, None
        g.broken, g.check = None, parent.check
        parent.subgroups.append(g)
        return g

    def global_rank(self, r: int) -> int:
        return r if self.global_ranks is None else self.global_ranks[r]

    def group_rank(self, op: str, r, name: str) -> int:
        """The rank in this group of global rank ``r`` (torch's collectives take global ranks)."""
        if not isinstance(r, int) or isinstance(r, bool):
            raise ValueError(f"[{op}] {name} must be an int rank, got {r!r}")
        if self.global_ranks is None:
            if not 0 <= r < self.size:
                raise ValueError(f"[{op}] {name} must be a rank in [0, {self.size}), got {r}")
            return r
        if r not in self.global_ranks:
            raise ValueError(f"[{op}] {name} {r} is not in the group (its global ranks: {self.global_ranks})")
        return self.global_ranks.index(r)

    def free(self) -> None:
        """Frees a subgroup's communicators (its ranks call this together, as destroy_process_group)."""
        if self.comm is not None:
            if self.nccl is not None:
                self.nccl.destroy()
            if self.broken is None and not self.MPI.Is_finalized():
                self.comm.Free()
                self.meta_comm.Free()
            self.comm = self.meta_comm = None
        self.broken = self.broken or "the group was destroyed"

    def __init__(self, backend: str, timeout: float, use_nccl: bool = False):
        MPI = _mpi()
        self.MPI = MPI
        self.subgroups = []
        if MPI.Is_finalized():
            raise DistError("[init_process_group] MPI was finalized by destroy_process_group and cannot start again "
                            "in this process")
        if not MPI.Is_initialized():
            MPI.Init_thread(MPI.THREAD_MULTIPLE)
        self.comm = MPI.COMM_WORLD.Dup()  # collectives' data
        self.meta_comm = MPI.COMM_WORLD.Dup()  # the metadata check and send/recv headers
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        self.backend, self.timeout = backend, timeout
        self.use_nccl, self.nccl = use_nccl, None  # NCCL for cuda tensors: formed at the first one (_nccl.py)
        self.broken: str | None = None
        self.check = os.environ.get("BESSEMER_DIST_CHECK", "1") != "0"
        self.failing = False  # an uncaught exception is ending this process
        previous = sys.excepthook

        def note_failure(*exc):
            self.failing = True
            previous(*exc)

        sys.excepthook = note_failure
        atexit.register(self.finalize)

    def finalize(self) -> None:
        """MPI_Finalize waits for every rank: skipped when this process is failing or the group broke (a
        peer may never come), and bounded by a watchdog otherwise (Open MPI's mpirun wants it called)."""
        if self.comm is None:
            return
        MPI = self.MPI
        if self.broken is None and not self.failing and MPI.Is_initialized() and not MPI.Is_finalized():
            limit = min(self.timeout, 60.0)

            def watchdog():
                time.sleep(limit)
                sys.stderr.write(f"[destroy_process_group] MPI_Finalize on rank {self.rank} waited {limit:g} s for "
                                 "the other ranks; exiting without it\n")
                sys.stderr.flush()
                os._exit(1)

            threading.Thread(target=watchdog, daemon=True).start()
            for sub in self.subgroups:
                sub.free()
            if self.nccl is not None:
                self.nccl.destroy()
            self.comm.Free()
            self.meta_comm.Free()
            MPI.Finalize()
        self.comm = self.meta_comm = None

    # ---- waiting ----
    def ensure_usable(self, op: str) -> None:
        if self.comm is None:
            raise DistError(f"[{op}] the process group was destroyed")
        if self.global_ranks is not None and self.parent.comm is None:
            raise DistError(f"[{op}] the default process group was destroyed, and its subgroups with it")
        if self.broken is not None:
            raise DistBackendError(f"[{op}] the process group is unusable after an earlier failure: {self.broken}")

    def wait(self, op: str, requests: list, timeout: float | None = None, statuses: list | None = None) -> None:
        """Waits for MPI requests, at most the group's timeout; a failure breaks the group. ``statuses``:
        filled with the completed requests' statuses (a receive's sender)."""
        limit = self.timeout if timeout is None else timeout
        start = time.monotonic()
        deadline = start + limit
        try:
            while not self.MPI.Request.Testall(requests, statuses):
                now = time.monotonic()
                if now > deadline:
                    self.broken = f"{op} timed out after {limit:g} s"
                    raise DistBackendError(
                        f"[{op}] timed out after {limit:g} s on rank {self.rank} of {self.size}, waiting for the "
                        "other ranks: one may have failed, or be stuck, or be in a different collective")
                # MPI moves a collective on only inside its calls, so a sleeping waiter stalls the transfer:
                # poll for the first second, giving the core away between polls (ranks may share cores);
                # after that (a slow peer, or a dead one) poll every millisecond.
                if now - start < 1.0:
                    os.sched_yield()
                else:
                    time.sleep(1e-3)
        except self.MPI.Exception as e:
            self.broken = f"{op}: MPI reported {e.Get_error_string().splitlines()[0]}"
            raise DistBackendError(f"[{op}] failed on rank {self.rank}: MPI reported {e.Get_error_string()}") from None

    # ---- the metadata check ----
    def agree(self, op: str, t=None, extra: int = 0, extra2: int = 0) -> None:
        """Raises CollectiveMismatchError on every rank when the ranks' (op, dtype, shape, extra) differ."""
        self.ensure_usable(op)
        if not self.check or self.size == 1:
            return
        mine = np.full(_META, -1, dtype=np.int64)
        mine[0] = _OPS.index(op)
        if t is not None:
            mine[1], mine[2], mine[3] = _DTYPES.index(t.dtype), t.ndim, t.numel()
            if t.ndim <= _MAX_DIMS:
                mine[4:4 + t.ndim] = t.shape
            # The device takes part: a cuda tensor's collective may run on NCCL, another's on MPI.
            mine[-3] = _DEVICE_KINDS.index(t.device.type) if t.device.type in _DEVICE_KINDS else 99
        mine[-2], mine[-1] = extra, extra2
        every = np.empty((self.size, _META), dtype=np.int64)
        self.wait(op, [self.meta_comm.Iallgather(mine, every)])
        if (every == mine).all():
            return
        lines = "; ".join(f"rank {self.global_rank(r)}: {describe(every[r])}" for r in range(self.size))
        raise CollectiveMismatchError(f"[{op}] the ranks disagree on the collective: {lines}")


class Work:
    """A collective in flight (``async_op=True``): ``wait()`` blocks until it is done (at most the group's
    timeout, or ``timeout`` seconds) and writes the result into the tensors; ``is_completed()`` asks."""

    def __init__(self, group: Group, op: str, requests: list, finish=None):
        self._group, self._op, self._requests, self._finish = group, op, requests, finish
        self._done = False

    def is_completed(self) -> bool:
        if not self._done and self._requests:
            try:
                if not self._group.MPI.Request.Testall(self._requests):
                    return False
            except self._group.MPI.Exception:
                return False
        return True

    def is_success(self) -> bool:
        return self._done

    def wait(self, timeout=None) -> bool:
        if self._done:
            return True
        limit = None if timeout is None else (timeout.total_seconds() if hasattr(timeout, "total_seconds")
                                              else float(timeout))
        self._group.wait(self._op, self._requests, limit)
        self._done = True
        if self._finish is not None:
            self._finish()
        return True


class NotInGroup(Exception):
    """Raised by the group lookup on a rank outside the group; ``collective`` turns it into a no-op."""

    def __init__(self, op: str, rank: int):
        super().__init__(op)
        self.op, self.rank = op, rank


def collective(fn):
    """A collective called on a rank outside its group does nothing and returns None, as torch's."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except NotInGroup as e:
            warnings.warn(f"[{e.op}] rank {e.rank} is not in the given group: nothing to do", stacklevel=2)
            return None

    return call


# ---- the default group (init_process_group sets it) and the lookup every collective starts with ----
_world: Group | None = None


def set_world(g: Group | None) -> None:
    global _world
    _world = g


def resolve(group, op: str, members_only: bool = True) -> Group:
    """The group a collective runs on: the default one for None. On a rank outside ``group`` it raises
    NotInGroup (a no-op for ``collective``), unless ``members_only`` is False."""
    if _world is None:
        raise ValueError(f"[{op}] the default process group has not been initialized: call "
                         "bessemer.distributed.init_process_group() first")
    if group is None or group is _world:
        return _world
    if not isinstance(group, Group):
        raise TypeError(f"[{op}] group must be None or a group from new_group, got {type(group).__name__}")
    if members_only and not group.member:
        raise NotInGroup(op, _world.rank)
    return group
