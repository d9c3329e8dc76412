"""Run by tests/test_distributed.py on 4 processes: new_group. Collectives on a subgroup involve only
its members and take global ranks for src/dst; non-members do nothing; a new_group call that differs
between ranks raises on every rank; SyncBatchNorm and DistributedDataParallel over a subgroup."""

import sys
import warnings

import numpy as np

import bessemer as bm
import bessemer.distributed as dist
import bessemer.nn as nn
from bessemer.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group()
R, N = dist.get_rank(), dist.get_world_size()
assert N == 4
device = sys.argv[1]
odd = dist.new_group([3, 1])  # the group's ranks follow the global ones: 1 -> 0, 3 -> 1
even = dist.new_group([0, 2])
member = R % 2 == 1
assert dist.get_process_group_ranks(odd) == [1, 3] and dist.get_global_rank(odd, 1) == 3
assert odd.use_nccl == dist._resolve_group(None, "test").use_nccl  # the default group's engines
assert (dist.get_rank(odd), dist.get_world_size(odd)) == ((R // 2, 2) if member else (-1, -1))


def t(values, dtype=bm.float32):
    return bm.tensor(np.asarray(values), dtype=dtype, device=device)


# all_reduce on a transposed view: the members' values only; a non-member's call does nothing.
base = t(np.arange(6).reshape(2, 3) + 10 * R)
view = base.T
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = dist.all_reduce(view, group=odd)
assert out is None
if member:
    want = (np.arange(6).reshape(2, 3) * 2 + 10 * (1 + 3)).T
    np.testing.assert_array_equal(view.to("cpu").numpy(), want)
else:
    assert any("is not in the given group" in str(w.message) for w in caught)
    np.testing.assert_array_equal(base.to("cpu").numpy(), np.arange(6).reshape(2, 3) + 10 * R)

# Rooted collectives take global ranks.
if member:
    b = t([float(R)] * 3)
    dist.broadcast(b, src=3, group=odd)
    np.testing.assert_array_equal(b.to("cpu").numpy(), [3.0] * 3)
    try:
        dist.broadcast(b, src=0, group=odd)
        sys.exit("a root outside the group went unreported")
    except ValueError as e:
        assert "[broadcast] src 0 is not in the group (its global ranks: [1, 3])" in str(e), e
    whole = t(np.zeros((2, 2)))
    dist.all_gather_into_tensor(whole, t([R, -R], bm.float32), group=odd)
    np.testing.assert_array_equal(whole.to("cpu").numpy(), [[1, -1], [3, -3]])
    r = t([float(R)])
    dist.reduce(r, dst=1, group=odd, op=dist.ReduceOp.MAX)
    if R == 1:
        assert r.item() == 3.0
    got = [t([0.0]), t([0.0])] if R == 3 else None
    dist.gather(t([R * 1.5]), got, dst=3, group=odd)
    if R == 3:
        assert [x.item() for x in got] == [1.5, 4.5]
    s = t([0.0, 0.0])
    dist.scatter(s, [t([1.0, 2.0]), t([3.0, 4.0])] if R == 1 else None, src=1, group=odd)
    np.testing.assert_array_equal(s.to("cpu").numpy(), [1.0, 2.0] if R == 1 else [3.0, 4.0])
    if R == 1:
        dist.send(t([7.0, 8.0]), dst=3, group=odd)
    else:
        m = t([0.0, 0.0])
        assert dist.recv(m, group=odd) == 1  # the sender's global rank
        np.testing.assert_array_equal(m.to("cpu").numpy(), [7.0, 8.0])
else:
    e = t([float(R)])
    dist.all_reduce(e, group=even)
    assert e.item() == 0.0 + 2.0
dist.barrier()
print(f"rank {R}: subgroup collectives", flush=True)

# A new_group the ranks disagree on raises on every rank instead of hanging; the world still works.
try:
    dist.new_group([0, 1] if R == 0 else [0, 2])
    sys.exit("disagreeing new_group calls went unreported")
except dist.CollectiveMismatchError as e:
    assert "[new_group] the ranks disagree" in str(e), e
x = t([1.0])
dist.all_reduce(x)
assert x.item() == 4.0
print(f"rank {R}: new_group mismatch raised", flush=True)

# SyncBatchNorm per group: the odd ranks' statistics never mix with the even ones'.
bn = nn.SyncBatchNorm(2, process_group=odd if member else even).to(device)
rng = np.random.default_rng(5)
scale = np.array([1, 5, 9, 13], np.float32)[:, None, None, None]
data = rng.standard_normal((4, 3, 2, 4)).astype(np.float32) * scale + scale  # rank r's input: data[r], (3, 2, 4)
y = bn(t(data[R]))
pair = np.concatenate(data[[1, 3]] if member else data[[0, 2]])  # the group's whole batch, (6, 2, 4)
mean, var = pair.mean(axis=(0, 2)), pair.var(axis=(0, 2))
want = (data[R] - mean[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5)
np.testing.assert_allclose(y.detach().to("cpu").numpy(), want, rtol=1e-4, atol=1e-4)
print(f"rank {R}: SyncBatchNorm over a subgroup", flush=True)

# DDP over the odd ranks: their parameters stay equal and follow one process on both shares.
if member:
    bm.manual_seed(10 + R)
    net = DDP(nn.Linear(3, 2).to(device), process_group=odd)
    bm.manual_seed(0)
    batch = rng.standard_normal((4, 3)).astype(np.float32)
    ref = nn.Linear(3, 2).to(device)
    ref.load_state_dict({k: v.clone() for k, v in net.module.state_dict().items()})
    share = slice(0, 2) if R == 1 else slice(2, 4)
    (net(t(batch[share])) ** 2).mean().backward()  # DDP averages the two shares' means
    (ref(t(batch)) ** 2).mean().backward()
    np.testing.assert_allclose(net.module.weight.grad.to("cpu").numpy(), ref.weight.grad.to("cpu").numpy(),
                               rtol=1e-5, atol=1e-6)
else:
    try:
        DDP(nn.Linear(3, 2), process_group=odd)
        sys.exit("DDP on a rank outside its group went unreported")
    except ValueError as e:
        assert "[DistributedDataParallel] rank" in str(e) and "is not in process_group [1, 3]" in str(e), e
print(f"rank {R}: DDP over a subgroup", flush=True)

dist.destroy_process_group(odd)
if member:
    try:
        dist.all_reduce(t([1.0]), group=odd)
        sys.exit("a destroyed group went unreported")
    except dist.DistError as e:
        assert "destroyed" in str(e), e
dist.destroy_process_group()
print(f"rank {R}: groups destroyed", flush=True)
