"""The launcher's process-management service: the PMI-1 wire protocol that MPICH-family MPI libraries
speak to their process manager, over TCP.

``python -m bessemer.distributed.run`` starts the ranks itself (as torchrun does) instead of through
``mpiexec``, so that it can prefix their output and stop them all when one fails. MPI still needs
what a process manager gives it: each process's rank and the world size, a key-value space where
the processes publish their network addresses, and barriers. This module serves exactly that; the
MPI library then connects the processes and runs every collective itself. A process finds the
service through ``PMI_PORT`` (host:port) and ``PMI_ID`` (its rank), the variables MPICH's own
``mpiexec`` sets.

The same server carries the launchers' control channel across nodes: a launcher that sees a local
rank fail reports it, and every launcher is told to stop its ranks.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
from collections.abc import Callable

# What MPICH's simple PMI client asks for: the limits it sizes its buffers with.
_MAXES = "kvsname_max=256 keylen_max=256 vallen_max=8192"


def _fields(line: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in line.split() if "=" in kv)


class PMIServer:
    """Serves ``world_size`` processes laid out as ``nnodes`` nodes of ``ppn`` ranks each (rank
    ``node * ppn + local``). ``on_abort(rank, reason)`` runs, once, when a process calls
    ``MPI_Abort``, a process's connection drops before it finalized, or a launcher reports a failure."""

    def __init__(self, host: str, port: int, nnodes: int, ppn: int, on_abort: Callable[[int, str], None]):
        self.world = nnodes * ppn
        self._mapping = f"(vector,(0,{nnodes},{ppn}))"  # MPICH's node layout string: block placement
        # MPICH names its shared-memory segments after the key space: a name of this job's own, so two
        # jobs on one machine (or a killed job's leftovers in /dev/shm) never meet.
        self.kvsname = f"bessemer_{os.getpid()}_{secrets.token_hex(6)}"
        self._kvs: dict[str, str] = {}
        self._lock = threading.Lock()
        self._waiting: list[Callable[[str], None]] = []  # barrier_in replies not yet sent
        self._launchers: list[Callable[[str], None]] = []
        # The other nodes' launchers whose ranks all ended well: node 0 keeps serving until every one
        # has said so, or a launcher that is still waiting for its last ranks to exit would see the
        # connection close and take it for node 0's failure.
        self._remote_nodes, self._nodes_done = nnodes - 1, 0
        self._all_nodes_done = threading.Event()
        if self._remote_nodes == 0:
            self._all_nodes_done.set()
        self._on_abort = on_abort
        self._aborted = False
        self._sock = socket.create_server((host, port), reuse_port=False, backlog=256)
        self.port = self._sock.getsockname()[1]
        threading.Thread(target=self._accept, name="pmi-accept", daemon=True).start()

    def close(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass

    def wait_nodes_done(self, stop: threading.Event) -> None:
        """Returns once every other node's launcher reported that its ranks ended well, or `stop` is set."""
        while not stop.is_set() and not self._all_nodes_done.wait(0.05):
            pass

    def abort(self, rank: int, reason: str) -> None:
        """Tells every launcher to stop its ranks (the first failure wins)."""
        with self._lock:
            if self._aborted:
                return
            self._aborted = True
            launchers = list(self._launchers)
        for send in launchers:
            try:
                send(f"cmd=stop rank={rank}")
            except OSError:
                pass
        self._on_abort(rank, reason)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), name="pmi-client", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        f = conn.makefile("rw", encoding="utf-8", newline="\n")
        send_lock = threading.Lock()

        def send(msg: str) -> None:
            with send_lock:
                f.write(msg + "\n")
                f.flush()

        rank, finalized, launcher = -1, False, False
        try:
            for line in f:
                d = _fields(line.strip())
                cmd = d.get("cmd", "")
                if cmd == "initack":  # PMI_PORT clients say who they are first
                    rank = int(d.get("pmiid", "-1"))
                    send("cmd=initack rc=0")
                    send(f"cmd=set size={self.world}")
                    send(f"cmd=set rank={rank}")
                    send("cmd=set debug=0")
                elif cmd == "init":
                    send("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0")
                elif cmd == "get_maxes":
                    send(f"cmd=maxes {_MAXES} rc=0")
                elif cmd == "get_appnum":
                    send("cmd=appnum appnum=0 rc=0")
                elif cmd == "get_my_kvsname":
                    send(f"cmd=my_kvsname kvsname={self.kvsname} rc=0")
                elif cmd == "get_universe_size":
                    send(f"cmd=universe_size size={self.world} rc=0")
                elif cmd == "put":
                    with self._lock:
                        self._kvs[d.get("key", "")] = d.get("value", "")
                    send("cmd=put_result rc=0")
                elif cmd == "get":
                    key = d.get("key", "")
                    with self._lock:
                        value = self._mapping if key == "PMI_process_mapping" else self._kvs.get(key)
                    send(f"cmd=get_result rc=0 value={value}" if value is not None
                         else "cmd=get_result rc=-1 msg=key_not_found")
                elif cmd == "barrier_in":
                    self._barrier(send)
                elif cmd == "finalize":
                    finalized = True
                    send("cmd=finalize_ack rc=0")
                elif cmd == "abort":
                    self.abort(rank, f"rank {rank} called MPI_Abort (exit code {d.get('exitcode', '?')})")
                elif cmd == "launcher":  # a node's launcher: the control channel
                    launcher = True
                    with self._lock:
                        self._launchers.append(send)
                        stop = self._aborted
                    if stop:
                        send("cmd=stop rank=-1")
                elif cmd == "done":  # a launcher whose ranks all ended well
                    finalized = True
                    with self._lock:
                        self._nodes_done += 1
                        if self._nodes_done >= self._remote_nodes:
                            self._all_nodes_done.set()
                elif cmd == "failed":  # a launcher saw one of its ranks fail
                    self.abort(int(d.get("rank", "-1")), d.get("reason", "a rank failed").replace("_", " "))
                else:
                    send(f"cmd={cmd or 'unknown'}_result rc=-1 msg=unsupported_by_bessemer_launcher")
        except (OSError, ValueError):
            pass
        finally:
            conn.close()
        # A process whose connection drops before it finalized has died: its launcher reports that
        # with the exit code, so only a lost launcher is handled here.
        if launcher and not finalized:
            self.abort(-1, "a node's launcher disconnected")

    def _barrier(self, send: Callable[[str], None]) -> None:
        with self._lock:
            self._waiting.append(send)
            if len(self._waiting) < self.world:
                return
            release, self._waiting = self._waiting, []
        for s in release:
            try:
                s("cmd=barrier_out rc=0")
            except OSError:
                pass
