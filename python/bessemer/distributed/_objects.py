"""Collectives of picklable Python objects (torch's ``*_object`` functions): a metric dict, a config, a
list of file names. Each object is pickled, the sizes travel first, then the bytes, with MPI's
non-blocking collectives on the group's communicator, so these waits are bounded by the group's
timeout like every other. Unpickling runs what the sender pickled: use them between ranks of one job,
as torch says of its own."""

from __future__ import annotations

import pickle

import numpy as np

from ._group import Group, collective, resolve


def _pickle(obj, op: str) -> np.ndarray:
    try:
        return np.frombuffer(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8)
    except Exception as e:  # noqa: BLE001 - any pickling failure, named
        raise TypeError(f"[{op}] the object cannot be pickled: {e}") from e


def _unpickle(raw: np.ndarray):
    return pickle.loads(raw.tobytes())


def _gather_bytes(g: Group, op: str, mine: np.ndarray, root: int | None) -> list[np.ndarray] | None:
    """Every rank's bytes, on every rank (root None) or on ``root`` only (None elsewhere)."""
    MPI = g.MPI
    sizes = np.empty(g.size, dtype=np.int64)
    g.wait(op, [g.comm.Iallgather(np.array([mine.size], np.int64), sizes)])
    displs = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    if root is not None and g.rank != root:
        g.wait(op, [g.comm.Igatherv([mine, MPI.BYTE], None, root=root)])
        return None
    whole = np.empty(int(sizes.sum()), dtype=np.uint8)
    spec = [whole, (sizes.tolist(), displs.tolist()), MPI.BYTE]
    req = g.comm.Iallgatherv([mine, MPI.BYTE], spec) if root is None else \
        g.comm.Igatherv([mine, MPI.BYTE], spec, root=root)
    g.wait(op, [req])
    return [whole[d:d + s] for d, s in zip(displs, sizes)]


def _bcast_bytes(g: Group, op: str, raw: np.ndarray | None, root: int) -> np.ndarray:
    size = np.array([raw.size if g.rank == root else 0], np.int64)
    g.wait(op, [g.comm.Ibcast(size, root=root)])
    buf = raw if g.rank == root else np.empty(int(size[0]), dtype=np.uint8)
    g.wait(op, [g.comm.Ibcast([buf, g.MPI.BYTE], root=root)])
    return buf


def _check_list(op: str, name: str, lst, size: int | None) -> None:
    if not isinstance(lst, list):
        raise TypeError(f"[{op}] {name} must be a list, got {type(lst).__name__}")
    if size is not None and len(lst) != size:
        raise ValueError(f"[{op}] {name} must have one entry per rank of the group ({size}), got {len(lst)}")


@collective
def all_gather_object(object_list: list, obj, group=None) -> None:
    """``object_list[r]`` = rank r's ``obj``, on every rank (object_list has the group's size)."""
    g = resolve(group, "all_gather_object")
    _check_list("all_gather_object", "object_list", object_list, g.size)
    mine = _pickle(obj, "all_gather_object")
    g.agree("all_gather_object", None, len(object_list))
    for r, raw in enumerate(_gather_bytes(g, "all_gather_object", mine, None)):
        object_list[r] = _unpickle(raw)


@collective
def gather_object(obj, object_gather_list: list | None = None, dst: int = 0, group=None) -> None:
    """On rank ``dst``: ``object_gather_list[r]`` = rank r's ``obj`` (None on the other ranks)."""
    g = resolve(group, "gather_object")
    root = g.group_rank("gather_object", dst, "dst")
    if g.rank == root:
        _check_list("gather_object", "object_gather_list", object_gather_list, g.size)
    elif object_gather_list is not None:
        raise ValueError(f"[gather_object] object_gather_list must be None on ranks other than {dst}")
    mine = _pickle(obj, "gather_object")
    g.agree("gather_object", None, root)
    every = _gather_bytes(g, "gather_object", mine, root)
    if every is not None:
        for r, raw in enumerate(every):
            object_gather_list[r] = _unpickle(raw)


@collective
def broadcast_object_list(object_list: list, src: int = 0, group=None, device=None) -> None:
    """In place: every rank's ``object_list`` becomes rank ``src``'s (the lists have the same length)."""
    g = resolve(group, "broadcast_object_list")
    root = g.group_rank("broadcast_object_list", src, "src")
    _check_list("broadcast_object_list", "object_list", object_list, None)
    raw = _pickle(list(object_list), "broadcast_object_list") if g.rank == root else None
    g.agree("broadcast_object_list", None, root, len(object_list))
    got = _unpickle(_bcast_bytes(g, "broadcast_object_list", raw, root))
    if g.rank != root:
        object_list[:] = got


@collective
def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list: list | None = None,
                        src: int = 0, group=None) -> None:
    """``scatter_object_output_list[0]`` on rank r = ``scatter_object_input_list[r]`` of rank ``src``."""
    op = "scatter_object_list"
    g = resolve(group, op)
    root = g.group_rank(op, src, "src")
    _check_list(op, "scatter_object_output_list", scatter_object_output_list, None)
    if not scatter_object_output_list:
        raise ValueError(f"[{op}] scatter_object_output_list must have at least one entry (it receives into [0])")
    if g.rank == root:
        _check_list(op, "scatter_object_input_list", scatter_object_input_list, g.size)
    g.agree(op, None, root)
    # One broadcast of the root's list, each rank keeping its entry: simple, and the lists are small.
    raw = _pickle(list(scatter_object_input_list), op) if g.rank == root else None
    scatter_object_output_list[0] = _unpickle(_bcast_bytes(g, op, raw, root))[g.rank]
