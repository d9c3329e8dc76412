"""``python -m bessemer.distributed.run``: starts a training script as N processes, as torchrun does.

    python -m bessemer.distributed.run --nproc-per-node 4 train.py --epochs 3
    python -m bessemer.distributed.run --nproc-per-node 2 -m mypackage.train

Each process gets ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR`` and
``MASTER_PORT``, plus what MPI needs to form its world (``PMI_PORT``, ``PMI_ID``: the launcher serves
MPI's process-management protocol, see ``_pmi.py``). On a machine with NVIDIA GPUs each process sees
one GPU (``CUDA_VISIBLE_DEVICES``; ``cuda:0`` in the process is its own), unless the variable is set.
Output lines are prefixed with ``[rankN]:``. When a process fails, the others are stopped (SIGTERM,
then SIGKILL after ``--stop-grace`` seconds) and the launcher exits with the failed process's code.

Several machines: run the launcher on each, with the same ``--nnodes``, ``--nproc-per-node``,
``--master-addr`` (an address of node 0 the others can reach) and ``--master-port``, and its own
``--node-rank``:

    node0$ python -m bessemer.distributed.run --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 \\
               --nproc-per-node 8 train.py
    node1$ python -m bessemer.distributed.run --nnodes 2 --node-rank 1 --master-addr 10.0.0.1 \\
               --nproc-per-node 8 train.py

A failure on any node stops every node's processes. The same scripts run unchanged under
``mpirun -n N python train.py`` (MPICH or Open MPI): ``init_process_group`` reads the world from MPI.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

from ._pmi import PMIServer

_TAG = "[bessemer.distributed.run]"
# Variables of an outer mpiexec that would make the ranks talk to it instead of to this launcher.
_FOREIGN = ("PMI_FD", "PMI_RANK", "PMI_SIZE", "PMI_SPAWNED", "PMIX_RANK", "PMIX_NAMESPACE", "PMIX_SERVER_URI2",
            "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "HYDI_CONTROL_FD")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bessemer.distributed.run",
                                description="Run a script as several processes for bessemer.distributed.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1, help="processes on this machine")
    p.add_argument("--nnodes", type=int, default=1, help="machines taking part (default 1)")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0, help="this machine's index, 0..nnodes-1")
    p.add_argument("--master-addr", "--master_addr", default=None,
                   help="address of node 0 that every node reaches (default 127.0.0.1 on one machine)")
    p.add_argument("--master-port", "--master_port", type=int, default=None,
                   help="port of node 0's rendezvous (default: a free port on one machine, 29500 on several)")
    p.add_argument("--rdzv-timeout", type=float, default=300.0,
                   help="seconds a node waits for node 0's rendezvous (default 300)")
    p.add_argument("--stop-grace", type=float, default=3.0,
                   help="seconds between SIGTERM and SIGKILL when stopping processes (default 3)")
    p.add_argument("-m", "--module", action="store_true", help="run the target as a module (python -m)")
    p.add_argument("script", help="the script (or module, with -m) to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    return p


def _mpich_library() -> str | None:
    """The libmpi of the `mpich` wheel, when installed. mpi4py loads the first libmpi it finds, which on
    a machine with a system Open MPI is that one; this launcher serves MPICH's protocol, so the ranks
    are pointed at MPICH's library (MPI4PY_LIBMPI) unless the user chose one."""
    from importlib import metadata

    try:
        dist = metadata.distribution("mpich")
    except metadata.PackageNotFoundError:
        return None
    for f in dist.files or []:
        if f.name in ("libmpi.so.12", "libmpi.12.dylib"):
            path = dist.locate_file(f)
            if os.path.exists(path):
                return os.path.realpath(path)
    return None


def _gpu_count() -> int:
    if shutil.which("nvidia-smi") is None:
        return 0
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


# Linux: each rank asks to be killed when the launcher dies, however it dies, so no rank is left
# spinning in a collective without its launcher. Looked up here: the child, between fork and exec,
# only makes the call.
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None


def _die_with_parent() -> None:
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _shm_segments() -> set[str]:
    try:
        return {n for n in os.listdir("/dev/shm") if n.startswith("mpich_shm_")}
    except OSError:
        return set()


class _Launch:
    def __init__(self, a: argparse.Namespace):
        if a.nproc_per_node < 1 or a.nnodes < 1 or not 0 <= a.node_rank < a.nnodes:
            raise SystemExit(f"{_TAG} need --nproc-per-node >= 1, --nnodes >= 1 and 0 <= --node-rank < --nnodes; got "
                             f"{a.nproc_per_node}, {a.nnodes}, {a.node_rank}")
        self.a = a
        self.world = a.nnodes * a.nproc_per_node
        self.addr = a.master_addr or "127.0.0.1"
        if a.nnodes > 1 and a.master_addr is None:
            raise SystemExit(f"{_TAG} --nnodes {a.nnodes} needs --master-addr: an address of node 0 every node reaches")
        self.port = a.master_port if a.master_port is not None else (29500 if a.nnodes > 1 else 0)
        self.procs: dict[int, subprocess.Popen] = {}
        self.stopping = threading.Event()
        self.failure: tuple[int, int, str] | None = None  # (rank, exit code, reason)
        self.out_lock = threading.Lock()
        self.server: PMIServer | None = None
        self.channel: socket.socket | None = None
        self.pumps: list[threading.Thread] = []

    # ---- rendezvous ----
    def rendezvous(self) -> None:
        a = self.a
        if a.node_rank == 0:
            bind = "" if a.nnodes > 1 else self.addr  # all interfaces when other machines connect
            try:
                self.server = PMIServer(bind, self.port, a.nnodes, a.nproc_per_node, self._remote_stop)
            except OSError as e:
                raise SystemExit(f"{_TAG} cannot listen on port {self.port}: {e}") from None
            self.port = self.server.port
            return
        deadline = time.monotonic() + a.rdzv_timeout
        while True:
            try:
                self.channel = socket.create_connection((self.addr, self.port), timeout=5)
                break
            except OSError as e:
                if time.monotonic() > deadline:
                    raise SystemExit(f"{_TAG} node 0's rendezvous at {self.addr}:{self.port} did not answer within "
                                     f"{a.rdzv_timeout:g} s: {e}") from None
                time.sleep(0.5)
        self.channel.settimeout(None)
        self.channel.sendall(f"cmd=launcher node={a.node_rank}\n".encode())
        threading.Thread(target=self._listen, daemon=True).start()

    def _listen(self) -> None:
        assert self.channel is not None
        f = self.channel.makefile("r", encoding="utf-8")
        for line in f:
            if line.startswith("cmd=stop"):
                self._remote_stop(-1, "a process on another node failed")
                return
        if not self.stopping.is_set() and any(p.poll() is None for p in self.procs.values()):
            self._remote_stop(-1, "lost the connection to node 0's launcher")

    def _remote_stop(self, rank: int, reason: str) -> None:
        if self.failure is None:
            self.failure = (rank, 1, reason)
        self.stopping.set()

    # ---- processes ----
    def spawn(self) -> None:
        a = self.a
        self.shm_before = _shm_segments()
        ngpu = _gpu_count() if "CUDA_VISIBLE_DEVICES" not in os.environ else 0
        libmpi = None if "MPI4PY_LIBMPI" in os.environ or "MPI4PY_MPIABI" in os.environ else _mpich_library()
        target = ["-m", a.script] if a.module else [a.script]
        for local in range(a.nproc_per_node):
            rank = a.node_rank * a.nproc_per_node + local
            env = {k: v for k, v in os.environ.items() if k not in _FOREIGN}
            env.update(RANK=str(rank), LOCAL_RANK=str(local), WORLD_SIZE=str(self.world),
                       LOCAL_WORLD_SIZE=str(a.nproc_per_node), GROUP_RANK=str(a.node_rank),
                       MASTER_ADDR=self.addr, MASTER_PORT=str(self.port), PMI_PORT=f"{self.addr}:{self.port}",
                       PMI_ID=str(rank), PYTHONUNBUFFERED="1", BESSEMER_LAUNCHER="1")
            if ngpu:
                env["CUDA_VISIBLE_DEVICES"] = str(local % ngpu)
            if libmpi:
                env["MPI4PY_LIBMPI"] = libmpi
            p = subprocess.Popen([sys.executable, "-u", *target, *a.args], env=env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                 preexec_fn=_die_with_parent)
            self.procs[rank] = p
            for pipe, sink in ((p.stdout, sys.stdout), (p.stderr, sys.stderr)):
                t = threading.Thread(target=self._pump, args=(rank, pipe, sink), daemon=True)
                t.start()
                self.pumps.append(t)

    def _pump(self, rank: int, pipe, sink) -> None:
        prefix = f"[rank{rank}]: ".encode()
        out = getattr(sink, "buffer", None)
        for line in iter(pipe.readline, b""):
            if not line.endswith(b"\n"):
                line += b"\n"
            with self.out_lock:
                try:
                    if out is not None:
                        out.write(prefix + line)
                    else:
                        sink.write((prefix + line).decode(errors="replace"))
                    sink.flush()
                except (BrokenPipeError, ValueError):
                    pass  # the reader went away (`| head`): keep draining, or the rank blocks on a full pipe
        pipe.close()

    def _signal_all(self, sig: int) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                try:
                    os.killpg(p.pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass

    def stop_all(self) -> None:
        self._signal_all(signal.SIGTERM)
        deadline = time.monotonic() + self.a.stop_grace
        while time.monotonic() < deadline and any(p.poll() is None for p in self.procs.values()):
            time.sleep(0.05)
        self._signal_all(signal.SIGKILL)
        for p in self.procs.values():
            p.wait()
        # MPICH removes its shared-memory segments at finalize; stopped processes leave theirs behind.
        for name in _shm_segments() - self.shm_before:
            try:
                os.unlink(os.path.join("/dev/shm", name))
            except OSError:
                pass

    def _local_failure(self, rank: int, code: int) -> None:
        why = (f"killed by {signal.Signals(-code).name}" if code < 0 and -code in signal.valid_signals()
               else f"exit code {code}")
        reason = f"rank {rank} failed ({why})"
        if self.failure is None:
            self.failure = (rank, code if code > 0 else 1, reason)
        self.stopping.set()
        if self.server is not None:
            self.server.abort(rank, reason)
        elif self.channel is not None:
            try:
                self.channel.sendall(f"cmd=failed rank={rank} reason={reason.replace(' ', '_')}\n".encode())
            except OSError:
                pass

    def wait(self) -> int:
        while not self.stopping.is_set():
            running = False
            for rank, p in self.procs.items():
                code = p.poll()
                if code is None:
                    running = True
                elif code != 0:
                    self._local_failure(rank, code)
                    break
            if not running and not self.stopping.is_set():
                break
            self.stopping.wait(0.05)
        if self.server is not None:  # node 0: the rendezvous stays up until every node's ranks ended
            self.server.wait_nodes_done(self.stopping)
        if self.stopping.is_set():
            _, code, reason = self.failure or (-1, 1, "stopped")
            with self.out_lock:
                print(f"{_TAG} {reason}; stopping the other processes", file=sys.stderr, flush=True)
            self.stop_all()
            return code
        if self.channel is not None:
            try:
                self.channel.sendall(b"cmd=done\n")
            except OSError:
                pass
        return 0


def main(argv: list[str] | None = None) -> int:
    a = _parser().parse_args(argv)
    launch = _Launch(a)
    launch.rendezvous()

    def forward(signum, _frame):
        launch._remote_stop(-1, f"the launcher got {signal.Signals(signum).name}")

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    try:
        launch.spawn()
        code = launch.wait()
        for t in launch.pumps:  # the last lines of output before the launcher ends
            t.join(timeout=5)
        return code
    finally:
        if launch.server is not None:
            launch.server.close()


if __name__ == "__main__":
    sys.exit(main())
