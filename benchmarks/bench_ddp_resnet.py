"""ResNet-18 data-parallel training: python benchmarks/bench_ddp_resnet.py [--gpus N] [--device cuda] [--sync-bn 1]

Trains ResNet-18 (SGD with momentum, synthetic 224x224 images, 100 classes) on one process with the
whole batch, then on N processes (one GPU each, through the launcher) with DistributedDataParallel
and an N-th of the batch each. Prints images per second of both and their ratio, and the loss of
every step side by side. With BatchNorm2d the curves agree closely but not to the last digit: it
normalizes each rank's share by that share's own statistics (as torch's DistributedDataParallel does
without SyncBatchNorm), where one process uses the whole batch's. With --sync-bn 1 the DDP model's
BatchNorm2d layers become SyncBatchNorm: the first step's loss is the same, and later steps differ
only by rounding, amplified by training (--gpus 1 --sync-bn 1 shows the same difference between
SyncBatchNorm's arithmetic and BatchNorm2d's in one process: 8e-4 after 4 steps of batch 4 on cpu,
against 1e-2 on two processes without SyncBatchNorm).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np


def train(device: str, batch: int, steps: int, distributed: bool, sync_bn: bool = False) -> dict:
    import bessemer as bm
    import bessemer.nn.functional as F

    rank, world = 0, 1
    if distributed:
        import bessemer.distributed as dist
        from bessemer.nn.parallel import DistributedDataParallel

        dist.init_process_group()
        rank, world = dist.get_rank(), dist.get_world_size()
    bm.manual_seed(0)
    model = bm.models.resnet18(num_classes=100).to(device)
    if distributed and sync_bn:
        model = bm.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    net = DistributedDataParallel(model) if distributed else model
    opt = bm.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    share = slice(rank * batch // world, (rank + 1) * batch // world)
    losses, times = [], []
    for step in range(steps):
        rng = np.random.default_rng(step)  # every rank draws the whole batch and takes its share
        x = bm.tensor(rng.standard_normal((batch, 3, 224, 224), dtype=np.float32)[share], device=device)
        y = bm.tensor(rng.integers(0, 100, batch)[share], device=device)
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        bm.synchronize(bm.device(device))
        times.append(time.perf_counter() - t0)
        if distributed:  # the whole batch's loss: the mean of the ranks' means
            dist.all_reduce(loss.detach(), op=dist.ReduceOp.AVG)
        losses.append(float(loss.item()))
    warm = times[2:] or times
    return {"rank": rank, "images_per_s": batch / float(np.median(warm)), "losses": losses}


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    opt = {a: argv[i + 1] for i, a in enumerate(argv[:-1]) if a.startswith("--")}
    device, gpus = opt.get("--device", "cuda"), int(opt.get("--gpus", 2))
    batch, steps = int(opt.get("--batch", 64)), int(opt.get("--steps", 12))
    sync_bn = opt.get("--sync-bn", "0") == "1"
    if "--rank" in argv:
        r = train(device, batch, steps, True, sync_bn)
        if r["rank"] == 0:
            print("RESULT " + json.dumps(r), flush=True)
        return
    one = train(device, batch, steps, False)
    out = subprocess.run([sys.executable, "-m", "bessemer.distributed.run", "--nproc-per-node", str(gpus), __file__,
                          "--rank", "1", "--device", device, "--batch", str(batch), "--steps", str(steps),
                          "--sync-bn", "1" if sync_bn else "0"],
                         capture_output=True, text=True, env=dict(os.environ))
    found = [ln.split("RESULT ", 1)[1] for ln in out.stdout.splitlines() if "RESULT " in ln]
    if out.returncode != 0 or not found:
        print(out.stdout[-2000:], out.stderr[-3000:], file=sys.stderr)
        raise SystemExit(out.returncode or 1)
    many = json.loads(found[0])
    print(f"ResNet-18 training, batch {batch} 224x224, {device}" + (", SyncBatchNorm" if sync_bn else ""))
    print(f"  1 process:   {one['images_per_s']:8.1f} images/s")
    speedup = many["images_per_s"] / one["images_per_s"]
    print(f"  {gpus} processes: {many['images_per_s']:8.1f} images/s  ({speedup:.2f}x)")
    worst = max(abs(a - b) / abs(b) for a, b in zip(many["losses"], one["losses"]))
    print("  loss per step (1 process | DDP): " + ", ".join(f"{a:.4f}|{b:.4f}" for a, b in
                                                           zip(one["losses"], many["losses"])))
    print(f"  largest relative difference of the loss curves: {worst:.2e}")


if __name__ == "__main__":
    main()
