"""Point to point: send/recv and their non-blocking forms. A header (dtype, shape) goes first on the
metadata communicator, so a receive can check what arrives and name a mismatch; then the data."""

from __future__ import annotations

import numpy as np

from ._buffers import SUPPORTED, Buffer, carrier_numpy_dtype, check_tensor
from ._group import CollectiveMismatchError, Group, Work, collective, resolve


def _header(t) -> np.ndarray:
    h = np.full(10, -1, dtype=np.int64)
    h[0], h[1] = SUPPORTED.index(t.dtype), t.numel()
    h[2:2 + min(t.ndim, 8)] = list(t.shape)[:8]
    return h


@collective
def isend(tensor, dst: int, group=None, tag: int = 0) -> Work:
    """Starts sending ``tensor`` to rank ``dst``; ``wait()`` on the result."""
    g = resolve(group, "send")
    g.ensure_usable("send")
    check_tensor("send", tensor, writable=False)
    dst = g.group_rank("send", dst, "dst")
    buf = Buffer(tensor)
    head = _header(tensor)
    reqs = [g.meta_comm.Isend(head, dest=dst, tag=tag), g.comm.Isend(buf.array, dest=dst, tag=tag)]
    return Work(g, "send", reqs, lambda: (head, buf))  # the buffers live until the sends complete


@collective
def send(tensor, dst: int, group=None, tag: int = 0) -> None:
    isend(tensor, dst, group, tag).wait()


class _RecvWork(Work):
    """A receive: the header first (it names the sender when src is None), then the data."""

    def __init__(self, g: Group, tensor, src, tag: int):
        self.head = np.empty(10, dtype=np.int64)
        self.status = g.MPI.Status()
        source = g.MPI.ANY_SOURCE if src is None else src
        super().__init__(g, "recv", [g.meta_comm.Irecv(self.head, source=source, tag=tag)])
        self.tensor, self.tag, self.sender = tensor, tag, -1

    def wait(self, timeout=None) -> bool:
        if self._done:
            return True
        g, t = self._group, self.tensor
        g.wait("recv", self._requests, timeout, [self.status])
        self.sender = g.global_rank(self.status.Get_source())
        buf = Buffer(t, read=False)
        count = int(self.head[1])
        data = buf.array if count == t.numel() else np.empty(count, dtype=carrier_numpy_dtype(
            SUPPORTED[int(self.head[0])]))
        g.wait("recv", [g.comm.Irecv(data, source=self.status.Get_source(), tag=self.tag)], timeout)
        mine = _header(t)
        if not np.array_equal(self.head, mine):
            sent = SUPPORTED[int(self.head[0])]
            shape = tuple(int(x) for x in self.head[2:] if x >= 0)
            raise CollectiveMismatchError(f"[recv] rank {self.sender} sent {sent} {shape} but the receiving tensor is "
                                          f"{t.dtype} {tuple(t.shape)}")
        buf.finish()
        self._done = True
        return True


@collective
def irecv(tensor, src: int | None = None, group=None, tag: int = 0) -> Work:
    """Starts receiving into ``tensor`` from rank ``src`` (any rank when None); ``wait()`` on the result."""
    g = resolve(group, "recv")
    g.ensure_usable("recv")
    check_tensor("recv", tensor, writable=True)
    if src is not None:
        src = g.group_rank("recv", src, "src")
    return _RecvWork(g, tensor, src, tag)


@collective
def recv(tensor, src: int | None = None, group=None, tag: int = 0) -> int:
    """Receives into ``tensor``; returns the sender's (global) rank."""
    w = irecv(tensor, src, group, tag)
    w.wait()
    return w.sender
