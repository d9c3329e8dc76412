"""Run by tests/test_distributed.py: DistributedDataParallel training equals one process training on
the whole batch; no_sync accumulation; unused parameters; checkpoints written by rank 0."""

import sys

import numpy as np

import bessemer as bm
import bessemer.distributed as dist
import bessemer.nn as nn
import bessemer.nn.functional as F
from bessemer.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group()
R, N = dist.get_rank(), dist.get_world_size()
device = sys.argv[1]
ckpt_dir = sys.argv[2]
STEPS, PER_RANK, ACCUM = 20, 4, 2


def model():
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 3)).to(device)


def data(step, micro):
    rng = np.random.default_rng(100 * step + micro)
    x = rng.standard_normal((N * PER_RANK, 6)).astype(np.float32)
    y = rng.integers(0, 3, N * PER_RANK)
    return bm.tensor(x, device=device), bm.tensor(y, device=device)


def params_of(m):
    return [p.detach().to("cpu").numpy().copy() for p in m.parameters()]


def rel_err(a, b):
    return max(float(np.abs(x - y).max() / max(np.abs(y).max(), 1e-12)) for x, y in zip(a, b))


for accumulate in (False, True):
    bm.manual_seed(1234 + R)  # every rank starts from different weights: DDP must take rank 0's
    local = model()
    ddp = DDP(local, bucket_cap_mb=0.001)  # small buckets: several all-reduces per backward
    bm.manual_seed(0)
    ref = model()
    ref.load_state_dict({k: v.clone() for k, v in local.state_dict().items()})
    opt = bm.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ref_opt = bm.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    mine = slice(R * PER_RANK, (R + 1) * PER_RANK)
    for step in range(STEPS):
        micros = ACCUM if accumulate else 1
        opt.zero_grad()
        for micro in range(micros):
            x, y = data(step, micro)
            if micro < micros - 1:
                with ddp.no_sync():
                    (F.cross_entropy(ddp(x[mine]), y[mine]) / micros).backward()
            else:
                (F.cross_entropy(ddp(x[mine]), y[mine]) / micros).backward()
        opt.step()
        # one process, the whole batch
        ref_opt.zero_grad()
        for micro in range(micros):
            x, y = data(step, micro)
            (F.cross_entropy(ref(x), y) / micros).backward()
        ref_opt.step()
    err = rel_err(params_of(local), params_of(ref))
    if not err <= 1e-5:
        sys.exit(f"rank {R}: DDP (accumulate={accumulate}) drifted from single-process training: {err:.3g}")
    every = [bm.zeros(1) for _ in range(N)]
    dist.all_gather(every, bm.tensor([float(sum(p.sum().item() for p in local.parameters()))]))
    if len({e.item() for e in every}) != 1:
        sys.exit(f"rank {R}: the ranks' parameters differ after training")
    print(f"rank {R}: accumulate={accumulate} matches one process (max relative error {err:.2e})", flush=True)


# A parameter outside the loss: an error naming it, or zero with find_unused_parameters=True.
class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body, self.used, self.spare = nn.Linear(4, 4), nn.Linear(4, 2), nn.Linear(4, 2)

    def forward(self, x):
        return self.used(self.body(x))


net = DDP(TwoHeads().to(device))
try:
    net(bm.ones(2, 4, device=device)).sum().backward()
    sys.exit("a parameter without a gradient went unreported")
except RuntimeError as e:
    assert "[DistributedDataParallel]" in str(e) and "spare.weight" in str(e) and "find_unused_parameters" in str(e), e
net = DDP(TwoHeads().to(device), find_unused_parameters=True)
net(bm.full((2, 4), float(R + 1), device=device)).sum().backward()
assert net.module.spare.weight.grad is None and net.module.body.weight.grad is not None
print(f"rank {R}: unused parameters reported and handled", flush=True)

# Checkpoints: written by rank 0, read by all.
path = f"{ckpt_dir}/model.safetensors"
if R == 0:
    bm.save_file(local.state_dict(), path)
dist.barrier()
loaded = bm.load_file(path, device=device)
for k, v in local.state_dict().items():
    assert np.array_equal(loaded[k].to("cpu").numpy(), v.to("cpu").numpy()), k
print(f"rank {R}: checkpoint round trip", flush=True)
dist.destroy_process_group()
