"""bessemer.distributed on the CPU: python benchmarks/bench_distributed.py [--nproc N]

1. all_reduce bandwidth, 4 KiB to 64 MiB of float32, against MPI's own figure: mpi4py's Allreduce on
   the same NumPy buffers in the same processes (what MPI reaches with no bessemer in the way). Bus
   bandwidth as NCCL's tests define it: 2 (n - 1) / n x bytes / time. "checked" includes the metadata
   check (the default); "unchecked" is what DistributedDataParallel's buckets use.
2. DistributedDataParallel's cost: an MLP trained at one total batch by one process (all threads) and
   by N processes (the threads split between them), steps per second and their ratio.

With --cuda (a machine with N GPUs, one per rank): all_reduce of cuda tensors, 1 MiB to 1 GiB, bessemer
(NCCL) against torch.distributed's NCCL in the same processes, bus bandwidth and ratio.

Run by itself it starts the launcher; each part then runs inside the N ranks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np


def _best(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _allreduce_rows(dist, comm, rank, n):
    from mpi4py.MPI import IN_PLACE

    import bessemer as bm

    if rank == 0:
        print(f"all_reduce (float32, SUM) on {n} processes: bus bandwidth GB/s, best of several", flush=True)
        print(f"{'size':>10} {'MPI (mpi4py)':>13} {'bessemer':>10} {'ratio':>6} {'unchecked':>10} {'ratio':>6}")
    for size in [4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20]:
        count = size // 4
        a = np.ones(count, np.float32)
        t = bm.ones(count)
        reps = 30 if size <= 1 << 20 else 8
        comm.Barrier()
        mpi = _best(lambda a=a: comm.Allreduce(IN_PLACE, a), reps)
        comm.Barrier()
        ours = _best(lambda t=t: dist.all_reduce(t), reps)
        comm.Barrier()
        raw = _best(lambda t=t: dist.all_reduce(t, _checked=False), reps)
        factor = 2 * (n - 1) / n * size / 1e9
        if rank == 0:
            print(f"{size >> 10:>8} K {factor / mpi:>13.2f} {factor / ours:>10.2f} {mpi / ours:>6.2f} "
                  f"{factor / raw:>10.2f} {mpi / raw:>6.2f}", flush=True)


def _train_rate(model_fn, batch, steps, ddp_wrap):
    import bessemer as bm
    import bessemer.nn.functional as F

    bm.manual_seed(0)
    model = model_fn()
    net = ddp_wrap(model) if ddp_wrap else model
    opt = bm.optim.SGD(net.parameters(), lr=0.01)
    rng = np.random.default_rng(0)
    x = bm.tensor(rng.standard_normal((batch, 512)).astype(np.float32))
    y = bm.tensor(rng.integers(0, 10, batch))

    def step():
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return steps / (time.perf_counter() - t0)


def _mlp():
    import bessemer.nn as nn

    return nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))


def _cuda_rows(dist, rank, n) -> None:
    """bessemer's NCCL all_reduce against torch.distributed's, the same sizes, in the same processes."""
    import torch
    import torch.distributed as tdist

    import bessemer as bm

    port = int(os.environ["MASTER_PORT"]) + 1  # the launcher's own rendezvous holds MASTER_PORT
    tdist.init_process_group("nccl", init_method=f"tcp://{os.environ['MASTER_ADDR']}:{port}", rank=rank,
                             world_size=n, device_id=torch.device("cuda", 0))
    if rank == 0:
        print(f"all_reduce of cuda float32 on {n} GPUs: bus bandwidth GB/s (NCCL both)", flush=True)
        print(f"{'size':>10} {'torch':>8} {'bessemer':>9} {'ratio':>6}")
    for size in [1 << 20, 16 << 20, 256 << 20, 1 << 30]:
        count = size // 4
        tt = torch.ones(count, device="cuda")
        bt = bm.ones(count, device="cuda")
        reps = 20 if size <= 16 << 20 else 5

        def torch_once(tt=tt):
            tdist.all_reduce(tt)
            torch.cuda.synchronize()

        torch_t = _best(torch_once, reps)
        ours = _best(lambda bt=bt: dist.all_reduce(bt, _checked=False), reps)
        factor = 2 * (n - 1) / n * size / 1e9 if n > 1 else size / 1e9
        if rank == 0:
            row = f"{size >> 20:>8} M {factor / torch_t:>8.1f} {factor / ours:>9.1f} {torch_t / ours:>6.2f}"
            print(row, flush=True)
    tdist.destroy_process_group()


def rank_main(total_batch: int, cuda: bool = False) -> None:
    import bessemer.distributed as dist
    from bessemer.nn.parallel import DistributedDataParallel

    dist.init_process_group()
    rank, n = dist.get_rank(), dist.get_world_size()
    if cuda:
        _cuda_rows(dist, rank, n)
        dist.destroy_process_group()
        return
    comm = dist._resolve_group(None, "bench_distributed").comm
    _allreduce_rows(dist, comm, rank, n)
    rate = _train_rate(_mlp, total_batch // n, 30, DistributedDataParallel)
    if rank == 0:
        print(f"DDP on {n} processes, {total_batch // n} samples each: {rate:.1f} steps/s", flush=True)
    dist.destroy_process_group()


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if "--rank-main" in argv:
        rank_main(int(argv[argv.index("--rank-main") + 1]), cuda="--cuda" in argv)
        return
    nproc = int(argv[argv.index("--nproc") + 1]) if "--nproc" in argv else 2
    if "--cuda" in argv:
        out = subprocess.run([sys.executable, "-m", "bessemer.distributed.run", "--nproc-per-node", str(nproc),
                              __file__, "--rank-main", "0", "--cuda"], capture_output=True, text=True)
        print("\n".join(ln.split(": ", 1)[1] for ln in out.stdout.splitlines() if ln.startswith("[rank0]: ")))
        if out.returncode != 0:
            print(out.stderr[-3000:], file=sys.stderr)
            raise SystemExit(out.returncode)
        return
    total_batch = 256
    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    # One process, every thread, the whole batch: the baseline DDP is measured against.
    import bessemer as bm

    bm.set_num_threads(threads)
    single = _train_rate(_mlp, total_batch, 30, None)
    print(f"one process, {threads} threads, batch {total_batch}: {single:.1f} steps/s", flush=True)
    # The threads split between the ranks (BESSEMER_NUM_THREADS: bessemer's pool; OpenBLAS's too).
    per = str(max(1, threads // nproc))
    env = dict(os.environ, BESSEMER_NUM_THREADS=per, OPENBLAS_NUM_THREADS=per, OMP_NUM_THREADS=per)
    out = subprocess.run([sys.executable, "-m", "bessemer.distributed.run", "--nproc-per-node", str(nproc), __file__,
                          "--rank-main", str(total_batch)], env=env, capture_output=True, text=True)
    lines = [ln.split(": ", 1)[1] for ln in out.stdout.splitlines() if ln.startswith("[rank0]: ")]
    print("\n".join(lines))
    if out.returncode != 0:
        print(out.stderr[-3000:], file=sys.stderr)
        raise SystemExit(out.returncode)
    ddp = [float(ln.split(": ")[-1].split()[0]) for ln in lines if ln.startswith("DDP on")]
    if ddp:
        print(f"DDP / one process at equal total batch: {ddp[0] / single:.2f}x the steps per second")


if __name__ == "__main__":
    main()
