"""Run by tests/test_distributed.py: DistributedDataParallel over a model whose BatchNorm2d layers
became SyncBatchNorm trains as one process does with BatchNorm2d on the whole batch (parameters and
running statistics); a rank may hold a share of a different size."""

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
STEPS = 10
# Unequal shares (rank r holds r + 2 samples): the statistics weigh each rank by its count.
SHARES = [r + 2 for r in range(N)]
START = [sum(SHARES[:r]) for r in range(N)]


def model():
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.Conv2d(4, 4, 3, padding=1), nn.BatchNorm2d(4, momentum=None), nn.ReLU(),
                         nn.Flatten(), nn.Linear(4 * 5 * 5, 3)).to(device)


def data(step):
    rng = np.random.default_rng(step)
    x = rng.standard_normal((sum(SHARES), 2, 5, 5)).astype(np.float32) * 2 + 1
    return bm.tensor(x, device=device), bm.tensor(rng.integers(0, 3, sum(SHARES)), device=device)


def state_of(m):
    return {k: v.detach().to("cpu").numpy().astype(np.float64) for k, v in m.state_dict().items()}


bm.manual_seed(0)
ref = model()
local = model()
local.load_state_dict({k: v.clone() for k, v in ref.state_dict().items()})
local = nn.SyncBatchNorm.convert_sync_batchnorm(local)
assert sum(isinstance(m, nn.SyncBatchNorm) for m in local.modules()) == 2
ddp = DDP(local)
opt = bm.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
ref_opt = bm.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
mine = slice(START[R], START[R] + SHARES[R])
for step in range(STEPS):
    x, y = data(step)
    # DDP averages the ranks' gradients, so each rank's loss is its share of the whole batch's mean,
    # scaled by N: the sum over ranks of (count_r / total) * mean_r = the whole batch's mean.
    opt.zero_grad()
    (F.cross_entropy(ddp(x[mine]), y[mine], reduction="sum") * (N / sum(SHARES))).backward()
    opt.step()
    ref_opt.zero_grad()
    F.cross_entropy(ref(x), y).backward()
    ref_opt.step()
ours, theirs = state_of(local), state_of(ref)
worst = max(float(np.abs(ours[k] - theirs[k]).max() / max(np.abs(theirs[k]).max(), 1e-12)) for k in theirs)
if not worst <= 1e-5:
    sys.exit(f"rank {R}: SyncBatchNorm training drifted from one process on the whole batch: {worst:.3g}")
print(f"rank {R}: SyncBatchNorm matches one process (max relative error {worst:.2e})", flush=True)

# A 3-D input (N, C, L): statistics over N and L of every rank, against the whole batch in numpy.
bn = nn.SyncBatchNorm(3).to(device)
rng = np.random.default_rng(7)
whole = rng.standard_normal((sum(SHARES), 3, 4)).astype(np.float32)
part = bm.tensor(whole[mine], device=device, requires_grad=True)
out = bn(part)
mean, var = whole.mean(axis=(0, 2)), whole.var(axis=(0, 2))
want = (whole[mine] - mean[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5)
np.testing.assert_allclose(out.detach().to("cpu").numpy(), want, rtol=1e-4, atol=1e-5)
np.testing.assert_allclose(bn.running_var.to("cpu").numpy(), 0.9 + 0.1 * whole.var(axis=(0, 2), ddof=1), rtol=1e-5)
print(f"rank {R}: 3-D input normalised by the whole batch", flush=True)
dist.destroy_process_group()
