"""NCCL for cuda tensors: the collectives run on the GPUs, with no host copy.

NCCL (``libnccl.so.2``, from the ``nvidia-nccl-cu13`` wheel that CUDA builds of torch also install,
or the path in ``BESSEMER_NCCL_LIBRARY``) is called through ctypes. The communicator is formed the
first time a collective meets a cuda tensor: rank 0's NCCL id travels over MPI, which stays the
control plane (the metadata check, timeouts, send/recv, barrier). A cuda tensor's memory is CUDA
managed memory (runtime_cuda.cpp), so its address is valid for NCCL as it is; bessemer's queue is
drained first, and NCCL runs on the context's legacy default stream, polled (cuStreamQuery) until
done or until the group's timeout, when the communicator is aborted.

When the ranks cannot form a communicator (NCCL missing, or several ranks on one GPU, which NCCL
refuses), every rank falls back to MPI on host copies, together, with one warning.
"""

from __future__ import annotations

import ctypes
import glob
import os
import time
import warnings

import numpy as np

from .. import _core
from ._group import DistBackendError

_dt = _core.dtype
# ncclDataType_t and ncclRedOp_t (nccl.h); bool travels as uint8 (SUM/MAX: any, PRODUCT/MIN: all).
_NCCL_DTYPE = {_dt.int8: 0, _dt.uint8: 1, _dt.bool: 1, _dt.int32: 2, _dt.int64: 4, _dt.float16: 6, _dt.float32: 7,
               _dt.float64: 8, _dt.bfloat16: 9}
_SUM, _PROD, _MAX, _MIN, _AVG = 0, 1, 2, 3, 4
_UNIQUE_ID_BYTES = 128
_IN_PROGRESS = 7  # ncclInProgress


def _library_paths():
    if os.environ.get("BESSEMER_NCCL_LIBRARY"):
        yield os.environ["BESSEMER_NCCL_LIBRARY"]
    try:
        import nvidia

        for root in nvidia.__path__:
            yield from sorted(glob.glob(os.path.join(root, "nccl", "lib", "libnccl.so*")))
    except ImportError:
        pass
    yield "libnccl.so.2"


def load() -> ctypes.CDLL | None:
    for path in _library_paths():
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


class _UniqueId(ctypes.Structure):  # ncclUniqueId: passed by value to ncclCommInitRank
    _fields_ = [("internal", ctypes.c_char * _UNIQUE_ID_BYTES)]


class NCCL:
    """One communicator over the group's ranks; ``ok`` is False when the ranks fell back to MPI."""

    def __init__(self, group):
        self.group, self.comm, self.ok = group, ctypes.c_void_p(), False
        lib, cuda = load(), None
        why = "libnccl.so.2 was not found (pip install nvidia-nccl-cu13, or set BESSEMER_NCCL_LIBRARY)"
        if lib is not None:
            try:
                cuda = ctypes.CDLL("libcuda.so.1")
            except OSError:
                lib, why = None, "libcuda.so.1 was not found"
        self.lib, self.cuda = lib, cuda
        uid = np.zeros(_UNIQUE_ID_BYTES, np.uint8)
        code = -1
        if lib is not None and group.rank == 0:
            code = lib.ncclGetUniqueId(uid.ctypes.data_as(ctypes.c_void_p))
        group.wait("init_process_group", [group.meta_comm.Ibcast(uid, root=0)])
        if lib is not None:
            lib.ncclCommInitRank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, _UniqueId, ctypes.c_int]
            code = lib.ncclCommInitRank(ctypes.byref(self.comm), group.size, _UniqueId.from_buffer_copy(uid.tobytes()),
                                        group.rank)
            if code != 0:
                lib.ncclGetErrorString.restype = ctypes.c_char_p
                why = f"ncclCommInitRank failed: {lib.ncclGetErrorString(code).decode()}"
        # All ranks fall back together, or none: a collective must run on one engine everywhere.
        codes = np.empty(group.size, np.int64)
        group.wait("init_process_group", [group.meta_comm.Iallgather(np.array([code], np.int64), codes)])
        self.ok = bool((codes == 0).all())
        if not self.ok:
            if code == 0:
                lib.ncclCommDestroy(self.comm)
            bad = [r for r in range(group.size) if codes[r] != 0]
            warnings.warn(f"[distributed] NCCL is not used for cuda tensors (ranks {bad}: {why if code else 'a peer'}"
                          "); their collectives go through MPI on host copies", RuntimeWarning, stacklevel=3)
            return

    def destroy(self) -> None:
        if self.ok:
            self.lib.ncclCommDestroy(self.comm)
            self.ok = False

    def _wait(self, op: str) -> None:
        """Polls the default stream until NCCL's kernel is done, at most the group's timeout."""
        g = self.group
        deadline = time.monotonic() + g.timeout
        while True:
            r = self.cuda.cuStreamQuery(ctypes.c_void_p(0))
            if r == 0:
                return
            if r != 600:  # CUDA_ERROR_NOT_READY
                g.broken = f"{op}: cuStreamQuery returned {r}"
                raise DistBackendError(f"[{op}] the GPU reported error {r} while NCCL ran")
            async_err = ctypes.c_int(0)
            self.lib.ncclCommGetAsyncError(self.comm, ctypes.byref(async_err))
            if async_err.value not in (0, _IN_PROGRESS) or time.monotonic() > deadline:
                self.lib.ncclCommAbort(self.comm)
                g.broken = f"{op}: NCCL " + ("timed out" if async_err.value in (0, _IN_PROGRESS) else
                                             f"error {async_err.value}")
                raise DistBackendError(f"[{op}] {g.broken} on rank {g.rank} of {g.size}")
            os.sched_yield()

    def run(self, op: str, name: str, *args) -> None:
        _core.synchronize(None)  # bessemer's queue has written the inputs
        code = getattr(self.lib, name)(*args, self.comm, ctypes.c_void_p(0))
        if code != 0:
            raise DistBackendError(f"[{op}] {name} failed with NCCL error {code}")
        self._wait(op)


def carries(dtype) -> bool:
    return dtype in _NCCL_DTYPE


def reduce_code(op_name: str, dtype) -> int:
    """NCCL's op for a ReduceOp name (SUM, AVG, PRODUCT, MIN, MAX), as it applies to ``dtype``."""
    if dtype == _dt.bool:
        return {"SUM": _MAX, "MAX": _MAX, "PRODUCT": _MIN, "MIN": _MIN}[op_name]
    return {"SUM": _SUM, "AVG": _AVG, "PRODUCT": _PROD, "MIN": _MIN, "MAX": _MAX}[op_name]


def address(t) -> ctypes.c_void_p:
    return ctypes.c_void_p(t._data_ptr())


def count(t) -> ctypes.c_size_t:
    return ctypes.c_size_t(t.numel())
