"""Run by tests/test_distributed.py: one way for a job to go wrong, chosen by argv[1]."""

import datetime
import os
import signal
import sys
import time

import bessemer as bm
import bessemer.distributed as dist

mode = sys.argv[1]
dist.init_process_group(timeout=datetime.timedelta(seconds=float(sys.argv[2]) if len(sys.argv) > 2 else 60))
R, N = dist.get_rank(), dist.get_world_size()
dist.all_reduce(bm.ones(2))  # everyone got this far
if mode == "mismatch":
    try:
        dist.all_reduce(bm.ones(3 + R, 2))
    except dist.CollectiveMismatchError as e:
        print(f"caught: {e}", flush=True)
        sys.exit(5)
    sys.exit("the mismatch was not detected")
if mode == "mismatch_device":  # a cuda tensor may run on NCCL, a cpu one on MPI: the device must agree too
    try:
        dist.all_reduce(bm.ones(2, device="cpu" if R == 0 else "metal-sim"))
    except dist.CollectiveMismatchError as e:
        print(f"caught: {e}", flush=True)
        sys.exit(5)
    sys.exit("the mismatch was not detected")
if mode == "mismatch_op":  # different collectives at the same point
    try:
        dist.broadcast(bm.ones(2), 0) if R == 0 else dist.all_reduce(bm.ones(2))
    except dist.CollectiveMismatchError as e:
        print(f"caught: {e}", flush=True)
        sys.exit(5)
    sys.exit("the mismatch was not detected")
if R == 1:
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    raise RuntimeError("rank 1 fails before the collective")
t0 = time.monotonic()
try:
    dist.all_reduce(bm.ones(1000))
except dist.DistBackendError as e:
    print(f"raised after {time.monotonic() - t0:.1f} s: {e}", flush=True)
    sys.exit(3)
sys.exit("the collective returned although rank 1 never joined")
