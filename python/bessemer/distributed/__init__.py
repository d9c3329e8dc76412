"""bessemer.distributed: collectives across processes, with torch.distributed's names and meanings.

    import bessemer.distributed as dist
    dist.init_process_group()              # under `python -m bessemer.distributed.run` or `mpirun`
    dist.all_reduce(t, op=dist.ReduceOp.SUM)

The collectives run on MPI (``mpi4py`` over MPICH or Open MPI: ``pip install bessemer[distributed]``),
and cuda tensors' on NCCL (``_nccl.py``); none is an algorithm of ours. Every collective takes any
layout: a strided view is reduced as its logical elements and what lies outside the view is
untouched. Before moving data the ranks check that they called the same collective on the same
dtype, shape and device (``BESSEMER_DIST_CHECK=0`` turns the check off), and no wait lasts past
``init_process_group``'s ``timeout``. See docs/distributed.md.
"""

from __future__ import annotations

import datetime
import enum
import os

import numpy as np

from .. import _core
from . import _group
from ._buffers import Buffer, check_tensor, write_back
from ._group import CollectiveMismatchError, DistBackendError, DistError, Group, Work, collective
from ._group import resolve as _resolve_group

__all__ = ["init_process_group", "is_initialized", "is_available", "destroy_process_group", "new_group", "get_rank",
           "get_world_size", "get_global_rank", "get_process_group_ranks", "get_backend", "barrier", "all_reduce",
           "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter_tensor", "reduce", "gather", "scatter",
           "send", "recv", "isend", "irecv", "all_gather_object", "gather_object", "broadcast_object_list",
           "scatter_object_list", "ReduceOp", "Work", "DistError", "DistBackendError", "CollectiveMismatchError"]

_dt = _core.dtype
_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)  # torch's default for non-NCCL groups


class ReduceOp(enum.IntEnum):
    """How all_reduce and reduce_scatter_tensor combine the ranks' values."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7


def is_available() -> bool:
    """Whether the MPI engine (mpi4py) can be imported."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def is_initialized() -> bool:
    return _group._world is not None


def _seconds(timeout, op: str) -> float:
    """A timeout given as a ``datetime.timedelta`` or seconds, in seconds (positive)."""
    seconds = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)
    if not seconds > 0:
        raise ValueError(f"[{op}] timeout must be positive, got {timeout!r}")
    return seconds


def init_process_group(backend: str | None = None, init_method: str | None = None, timeout=None,
                       world_size: int = -1, rank: int = -1, store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Joins this process to the job's process group. ``backend``: None or "nccl" (NCCL for cuda tensors,
    MPI for the others), or "mpi" (MPI for every tensor). The world comes from MPI, which the launcher
    (``python -m bessemer.distributed.run``) or ``mpirun`` started; ``RANK`` and ``WORLD_SIZE``, when
    set, must agree with it. ``timeout``: a ``datetime.timedelta`` or seconds (default 30 minutes), the
    longest any collective waits."""
    if is_initialized():
        raise DistError("[init_process_group] the default process group is already initialized")
    backend = "default" if backend is None else str(backend).lower()
    if backend not in ("default", "mpi", "nccl", "gloo"):
        raise ValueError(f"[init_process_group] unknown backend {backend!r}: expected None, 'mpi' or 'nccl'")
    if init_method not in (None, "env://"):
        raise ValueError(f"[init_process_group] init_method {init_method!r} is not supported: the world comes from "
                         "MPI (the launcher or mpirun); leave it None")
    if store is not None:
        raise ValueError("[init_process_group] store= is not supported: the world comes from MPI")
    seconds = _seconds(_DEFAULT_TIMEOUT if timeout is None else timeout, "init_process_group")
    if not is_available():
        raise ImportError("[init_process_group] bessemer.distributed needs mpi4py and an MPI library: "
                          "pip install 'bessemer[distributed]' (mpi4py and mpich)")
    # None and "nccl": NCCL for cuda tensors (MPI for the rest); "mpi": MPI for every tensor.
    g = Group("nccl" if backend == "nccl" else "mpi", seconds, use_nccl=backend in ("default", "nccl"))
    expect_size = world_size if world_size != -1 else int(os.environ.get("WORLD_SIZE", g.size))
    expect_rank = rank if rank != -1 else int(os.environ.get("RANK", g.rank))
    if (expect_size, expect_rank) != (g.size, g.rank):
        library = g.MPI.Get_library_version().splitlines()[0].strip()
        g.finalize()
        hint = ("launch the script with `python -m bessemer.distributed.run --nproc-per-node N` or `mpirun -n N`"
                if os.environ.get("BESSEMER_LAUNCHER") != "1" else
                f"the launcher serves MPICH's process manager protocol, and this process loaded {library!r}: install "
                "the mpich wheel (pip install mpich), point MPI4PY_LIBMPI at an MPICH-family libmpi.so.12, or start "
                "the job with that library's own mpirun")
        raise DistError(f"[init_process_group] expected rank {expect_rank} of {expect_size} (RANK/WORLD_SIZE or the "
                        f"arguments), but MPI started this process as rank {g.rank} of {g.size}: {hint}")
    _group.set_world(g)


def destroy_process_group(group=None) -> None:
    """Leaves the process group (and finalizes MPI unless an earlier failure makes that unsafe); with a
    group from ``new_group``, frees that group only. Every rank calls it, as new_group."""
    g = _resolve_group(group, "destroy_process_group", members_only=False)
    if g.global_ranks is not None:  # a subgroup
        g.free()
        return
    g.finalize()
    _group.set_world(None)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization: bool = False,
              group_desc=None) -> Group:
    """A group of the listed global ``ranks`` (all when None), with its own communicators: pass it as
    ``group=`` to the collectives, which take global ranks for ``src``/``dst`` as torch's do. Every rank
    of the default group calls new_group with the same ranks, in the same order (checked: a mismatch
    raises on every rank); a rank outside the group gets a handle on which collectives do nothing."""
    world = _resolve_group(None, "new_group")
    if use_local_synchronization:
        raise ValueError("[new_group] use_local_synchronization=True is not supported: every rank calls new_group")
    if backend is not None and str(backend).lower() not in ("mpi", "nccl", "gloo"):
        raise ValueError(f"[new_group] unknown backend {backend!r}: expected None, 'mpi' or 'nccl'")
    members = list(range(world.size)) if ranks is None else list(ranks)
    if any(not isinstance(r, int) or isinstance(r, bool) or not 0 <= r < world.size for r in members):
        raise ValueError(f"[new_group] ranks must be global ranks in [0, {world.size}), got {members}")
    if len(set(members)) != len(members) or not members:
        raise ValueError(f"[new_group] ranks must be distinct and not empty, got {members}")
    members.sort()  # a member's rank in the group follows its global rank (torch's order)
    seconds = world.timeout if timeout is None else _seconds(timeout, "new_group")
    # Which ranks: a bitmask over the world; the check makes every rank agree before the split.
    world.agree("new_group", None, sum(1 << r for r in members) & ((1 << 62) - 1), len(members))
    # None: the default group's engines (NCCL for cuda tensors unless it was made with backend="mpi").
    use_nccl = world.use_nccl if backend is None else str(backend).lower() == "nccl"
    backend = world.backend if backend is None else ("nccl" if use_nccl else "mpi")
    return Group.split(world, members, seconds, backend, use_nccl)


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (-1 when it is not a member)."""
    return _resolve_group(group, "get_rank", members_only=False).rank


def get_world_size(group=None) -> int:
    """The number of ranks in ``group`` (-1 on a rank that is not a member)."""
    return _resolve_group(group, "get_world_size", members_only=False).size


def get_global_rank(group, group_rank: int) -> int:
    """The global rank of ``group``'s rank ``group_rank``."""
    g = _resolve_group(group, "get_global_rank", members_only=False)
    ranks = g.global_ranks if g.global_ranks is not None else list(range(g.size))
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"[get_global_rank] group rank {group_rank} is not in [0, {len(ranks)})")
    return ranks[group_rank]


def get_process_group_ranks(group) -> list[int]:
    """The global ranks of ``group``'s members, in group-rank order."""
    g = _resolve_group(group, "get_process_group_ranks", members_only=False)
    return list(g.global_ranks) if g.global_ranks is not None else list(range(g.size))


def get_backend(group=None) -> str:
    return _resolve_group(group, "get_backend").backend


def _done(work: Work, async_op: bool):
    if async_op:
        return work
    work.wait()
    return None


def _nccl_for(g: Group, *tensors):
    """The group's NCCL communicator when every tensor is on cuda and the ranks formed one; else None
    (MPI). Forming it is collective: the metadata check has made sure every rank got here with cuda."""
    from ._nccl import carries

    if not g.use_nccl or any(t.device.type != "cuda" or not carries(t.dtype) for t in tensors):
        return None  # int16 has no NCCL type: MPI carries it
    if g.nccl is None:
        from ._nccl import NCCL

        g.nccl = NCCL(g)
    return g.nccl if g.nccl.ok else None


def _dense(t):
    """t itself when NCCL can use its memory as it is, else a dense copy (written back by the caller)."""
    return t if t.is_contiguous() else t.contiguous()


def _mpi_op(g: Group, op_name: str, op, dtype):
    try:
        op = ReduceOp(op)
    except ValueError:
        raise ValueError(f"[{op_name}] unknown reduce op {op!r}: use bessemer.distributed.ReduceOp") from None
    MPI = g.MPI
    floating = dtype in (_dt.float32, _dt.float64, _dt.float16, _dt.bfloat16)
    if op == ReduceOp.AVG and not floating:
        raise TypeError(f"[{op_name}] ReduceOp.AVG needs a floating point tensor, got {dtype}")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and floating:
        raise TypeError(f"[{op_name}] ReduceOp.{op.name} needs an integer or bool tensor, got {dtype}")
    if dtype == _dt.bool:  # carried as 0/1 bytes: a sum is "any", a product "all" (torch's meaning)
        table = {ReduceOp.SUM: MPI.MAX, ReduceOp.MAX: MPI.MAX, ReduceOp.PRODUCT: MPI.MIN, ReduceOp.MIN: MPI.MIN,
                 ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}
    else:
        table = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD, ReduceOp.MIN: MPI.MIN,
                 ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}
    return op, table[op]


@collective
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False, *, _checked: bool = True):
    """In place: every rank's ``tensor`` becomes the reduction of all ranks' values. (``_checked=False``:
    DistributedDataParallel's buckets, whose agreement it checked once at construction.)"""
    g = _resolve_group(group, "all_reduce")
    check_tensor("all_reduce", tensor, writable=True)
    op, mpi_op = _mpi_op(g, "all_reduce", op, tensor.dtype)
    if _checked:
        g.agree("all_reduce", tensor, int(op))
    else:
        g.ensure_usable("all_reduce")
    nccl = _nccl_for(g, tensor) if op not in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) else None
    if nccl is not None:
        from . import _nccl as N

        buf = _dense(tensor)
        nccl.run("all_reduce", "ncclAllReduce", N.address(buf), N.address(buf), N.count(buf),
                 N._NCCL_DTYPE[tensor.dtype], N.reduce_code(op.name, tensor.dtype))
        if buf is not tensor:
            tensor.copy_(buf)
        return _done(Work(g, "all_reduce", []), async_op)
    buf = Buffer(tensor)
    req = g.comm.Iallreduce(g.MPI.IN_PLACE, buf.array, mpi_op)
    scale = float(g.size) if op == ReduceOp.AVG else None
    return _done(Work(g, "all_reduce", [req], lambda: buf.finish(scale)), async_op)


@collective
def broadcast(tensor, src: int, group=None, async_op: bool = False):
    """In place: every rank's ``tensor`` becomes rank ``src``'s."""
    g = _resolve_group(group, "broadcast")
    src = g.group_rank("broadcast", src, "src")
    check_tensor("broadcast", tensor, writable=g.rank != src)
    g.agree("broadcast", tensor, src)
    nccl = _nccl_for(g, tensor)
    if nccl is not None:
        from . import _nccl as N

        dense = _dense(tensor)
        nccl.run("broadcast", "ncclBroadcast", N.address(dense), N.address(dense), N.count(dense),
                 N._NCCL_DTYPE[tensor.dtype], src)
        if dense is not tensor:
            tensor.copy_(dense)
        return _done(Work(g, "broadcast", []), async_op)
    buf = Buffer(tensor, read=g.rank == src)
    req = g.comm.Ibcast(buf.array, root=src)
    return _done(Work(g, "broadcast", [req], (lambda: buf.finish()) if g.rank != src else None), async_op)


@collective
def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """``tensor_list[r]`` = rank r's ``tensor``, on every rank (a list of world-size tensors of its shape)."""
    g = _resolve_group(group, "all_gather")
    check_tensor("all_gather", tensor, writable=False)
    if not isinstance(tensor_list, (list, tuple)) or len(tensor_list) != g.size:
        got = f"{len(tensor_list)}" if isinstance(tensor_list, (list, tuple)) else type(tensor_list).__name__
        raise ValueError(f"[all_gather] tensor_list must be a list of {g.size} tensors (the world size), got {got}")
    for i, out in enumerate(tensor_list):
        check_tensor("all_gather", out, f"tensor_list[{i}]", writable=True)
        _same_kind("all_gather", out, tensor, f"tensor_list[{i}]")
    g.agree("all_gather", tensor)
    nccl = _nccl_for(g, tensor, *tensor_list)
    if nccl is not None:
        from . import _nccl as N

        dense = _dense(tensor)
        whole = _core.empty([g.size * tensor.numel()], tensor.dtype, tensor.device)
        nccl.run("all_gather", "ncclAllGather", N.address(dense), N.address(whole), N.count(dense),
                 N._NCCL_DTYPE[tensor.dtype])
        for r, out in enumerate(tensor_list):
            out.copy_(whole[r * tensor.numel():(r + 1) * tensor.numel()].reshape(tuple(out.shape)))
        return _done(Work(g, "all_gather", []), async_op)
    src = Buffer(tensor)
    gathered = np.empty(g.size * tensor.numel(), dtype=src.array.dtype)
    req = g.comm.Iallgather(src.array, gathered)

    def finish():
        for r, out in enumerate(tensor_list):
            write_back(out, gathered[r * tensor.numel():(r + 1) * tensor.numel()])

    return _done(Work(g, "all_gather", [req], finish), async_op)


@collective
def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """``output_tensor`` = the ranks' ``input_tensor`` concatenated along dim 0 (shape (world * d0, ...))
    or stacked (shape (world, *input.shape)), on every rank."""
    g = _resolve_group(group, "all_gather_into_tensor")
    _check_world_pair(g, "all_gather_into_tensor", (output_tensor, "output_tensor"), (input_tensor, "input_tensor"),
                      output_is_whole=True)
    g.agree("all_gather_into_tensor", input_tensor)
    nccl = _nccl_for(g, input_tensor, output_tensor)
    if nccl is not None:
        from . import _nccl as N

        src, dst = _dense(input_tensor), _dense(output_tensor)
        nccl.run("all_gather_into_tensor", "ncclAllGather", N.address(src), N.address(dst), N.count(src),
                 N._NCCL_DTYPE[src.dtype])
        if dst is not output_tensor:
            output_tensor.copy_(dst)
        return _done(Work(g, "all_gather_into_tensor", []), async_op)
    src, dst = Buffer(input_tensor), Buffer(output_tensor, read=False)
    req = g.comm.Iallgather(src.array, dst.array)
    return _done(Work(g, "all_gather_into_tensor", [req], dst.finish), async_op)


@collective
def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """``output`` on rank r = block r of the reduction of the ranks' ``input`` (input holds world size x
    output's elements, block r being elements [r * n, (r + 1) * n) in order)."""
    g = _resolve_group(group, "reduce_scatter_tensor")
    _check_world_pair(g, "reduce_scatter_tensor", (output, "output"), (input, "input"), output_is_whole=False)
    op, mpi_op = _mpi_op(g, "reduce_scatter_tensor", op, input.dtype)
    g.agree("reduce_scatter_tensor", input, int(op))
    nccl = _nccl_for(g, input, output) if op not in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) else None
    if nccl is not None:
        from . import _nccl as N

        src, dst = _dense(input), _dense(output)
        nccl.run("reduce_scatter_tensor", "ncclReduceScatter", N.address(src), N.address(dst), N.count(dst),
                 N._NCCL_DTYPE[src.dtype], N.reduce_code(op.name, src.dtype))
        if dst is not output:
            output.copy_(dst)
        return _done(Work(g, "reduce_scatter_tensor", []), async_op)
    src, dst = Buffer(input), Buffer(output, read=False)
    req = g.comm.Ireduce_scatter_block(src.array, dst.array, mpi_op)
    scale = float(g.size) if op == ReduceOp.AVG else None
    return _done(Work(g, "reduce_scatter_tensor", [req], lambda: dst.finish(scale)), async_op)


@collective
def reduce(tensor, dst: int, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """In place on rank ``dst``: its ``tensor`` becomes the reduction of all ranks' values. The other ranks'
    tensors are only read."""
    g = _resolve_group(group, "reduce")
    dst = g.group_rank("reduce", dst, "dst")
    check_tensor("reduce", tensor, writable=g.rank == dst)
    op, mpi_op = _mpi_op(g, "reduce", op, tensor.dtype)
    g.agree("reduce", tensor, dst, int(op))
    buf = Buffer(tensor)
    if g.rank == dst:
        req = g.comm.Ireduce(g.MPI.IN_PLACE, buf.array, mpi_op, root=dst)
        scale = float(g.size) if op == ReduceOp.AVG else None
        return _done(Work(g, "reduce", [req], lambda: buf.finish(scale)), async_op)
    return _done(Work(g, "reduce", [g.comm.Ireduce(buf.array, None, mpi_op, root=dst)], lambda: buf), async_op)


def _rooted(op: str, group, tensor, tensors, root: int):
    """The checks of gather and scatter, then the metadata check: (the group, the root's list or [], the
    root's rank in the group)."""
    g = _resolve_group(group, op)
    root = g.group_rank(op, root, "dst" if op == "gather" else "src")
    check_tensor(op, tensor, writable=op == "scatter")
    listed = _rank_list(g, op, tensors, f"{op}_list", root, tensor)
    g.agree(op, tensor, root)
    return g, listed, root


def _rank_list(g: Group, op: str, tensors, name: str, owner: int, like) -> list:
    """The per-rank list of gather/scatter: world-size tensors like ``like`` on rank ``owner``, None elsewhere."""
    if g.rank != owner:
        if tensors:
            raise ValueError(f"[{op}] {name} must be None (or empty) on ranks other than {g.global_rank(owner)}")
        return []
    if not isinstance(tensors, (list, tuple)) or len(tensors) != g.size:
        got = f"{len(tensors)}" if isinstance(tensors, (list, tuple)) else type(tensors).__name__
        raise ValueError(f"[{op}] {name} must be a list of {g.size} tensors (the group's size) on rank "
                         f"{g.global_rank(owner)}, "
                         f"got {got}")
    for i, t in enumerate(tensors):
        check_tensor(op, t, f"{name}[{i}]", writable=op == "gather")
        _same_kind(op, t, like, f"{name}[{i}]")
    return list(tensors)


@collective
def gather(tensor, gather_list=None, dst: int = 0, group=None, async_op: bool = False):
    """On rank ``dst``: ``gather_list[r]`` = rank r's ``tensor`` (gather_list is None on the other ranks)."""
    g, outs, dst = _rooted("gather", group, tensor, gather_list, dst)
    src = Buffer(tensor)
    whole = np.empty(g.size * tensor.numel(), dtype=src.array.dtype) if outs else None
    req = g.comm.Igather(src.array, whole, root=dst)

    def finish():
        for r, out in enumerate(outs):
            write_back(out, whole[r * tensor.numel():(r + 1) * tensor.numel()])

    return _done(Work(g, "gather", [req], finish), async_op)


@collective
def scatter(tensor, scatter_list=None, src: int = 0, group=None, async_op: bool = False):
    """Every rank's ``tensor`` becomes ``scatter_list[rank]`` of rank ``src`` (None on the other ranks)."""
    g, ins, src = _rooted("scatter", group, tensor, scatter_list, src)
    whole = np.concatenate([Buffer(t).array for t in ins]) if ins else None
    dst = Buffer(tensor, read=False)
    req = g.comm.Iscatter(whole, dst.array, root=src)
    return _done(Work(g, "scatter", [req], lambda: (whole, dst.finish())), async_op)


@collective
def barrier(group=None, async_op: bool = False, device_ids=None):
    """Returns once every rank has called it (or raises after the group's timeout)."""
    g = _resolve_group(group, "barrier")
    g.agree("barrier")
    return _done(Work(g, "barrier", [g.comm.Ibarrier()]), async_op)


def _check_world_pair(g: Group, op: str, output: tuple, input: tuple, *, output_is_whole: bool) -> None:
    """(tensor, name) pairs of a gather or scatter: one holds world size x the other's elements."""
    (out, out_name), (inp, inp_name) = output, input
    check_tensor(op, inp, inp_name, writable=False)
    check_tensor(op, out, out_name, writable=True)
    _same_kind(op, out, inp, out_name, shape=False)
    (whole, whole_name), part = (output, input) if output_is_whole else (input, output)
    if whole.numel() != g.size * part[0].numel():
        raise ValueError(f"[{op}] {whole_name} must hold world size ({g.size}) x the {part[1]}'s {part[0].numel()} "
                         f"elements, got shape {tuple(whole.shape)}")


def _same_kind(op: str, out, ref, name: str, shape: bool = True) -> None:
    if out.dtype != ref.dtype:
        raise TypeError(f"[{op}] {name} has dtype {out.dtype} but the input has {ref.dtype}")
    if shape and tuple(out.shape) != tuple(ref.shape):
        raise ValueError(f"[{op}] {name} has shape {tuple(out.shape)} but the input has {tuple(ref.shape)}")


# Point to point (send/recv): _p2p.py; picklable objects: _objects.py.
from ._objects import all_gather_object, broadcast_object_list, gather_object, scatter_object_list  # noqa: E402
from ._p2p import irecv, isend, recv, send  # noqa: E402
