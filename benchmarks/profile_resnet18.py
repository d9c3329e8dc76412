"""Where ResNet-18 inference spends its time: milliseconds per leaf-module type (convolutions by
kernel and stride), bessemer against torch channels_last, same weights, 2 threads (BENCH_THREADS).

    python benchmarks/profile_resnet18.py        # batch 8, then batch 1; best of 5 forward passes

Each leaf module's forward is timed on the host clock (both engines run eagerly on the CPU, so a
call returns when its work is done); "(rest)" is the forward's time outside the leaves: the residual
adds, flatten and Python. Timers cost a few microseconds per module, the same on both sides.
"""

from __future__ import annotations

import collections
import pathlib
import sys
import time

import numpy as np
import torch

import bessemer as bm
from common import THREADS  # noqa: F401  (sets both libraries' thread counts)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))
from torch_resnet import TorchResNet18  # noqa: E402

acc: dict[str, float] = collections.defaultdict(float)


def kind(m) -> str:
    name = type(m).__name__
    if name == "Conv2d":
        ks, st = m.kernel_size, m.stride
        ks, st = (ks if isinstance(ks, int) else ks[0]), (st if isinstance(st, int) else st[0])
        name += f" {ks}x{ks} s{st}"
    return name


def leaves(model):
    return [m for _, m in model.named_modules() if not list(m.children())]


def timed_forward(forward, k: str):
    def timed(*a, **kw):
        t0 = time.perf_counter()
        r = forward(*a, **kw)
        acc[k] += time.perf_counter() - t0
        return r
    return timed


def time_bessemer_leaves(model) -> None:
    for m in leaves(model):
        m.forward = timed_forward(m.forward, kind(m))


def time_torch_leaves(model) -> None:
    start: dict[int, float] = {}

    def before(mod, inp):
        start[id(mod)] = time.perf_counter()

    def after(mod, inp, out):
        acc[kind(mod)] += time.perf_counter() - start[id(mod)]

    for m in leaves(model):
        m.register_forward_pre_hook(before)
        m.register_forward_hook(after)


def best_breakdown(run) -> dict[str, float]:
    run()
    best: dict[str, float] | None = None
    for _ in range(5):
        acc.clear()
        t0 = time.perf_counter()
        run()
        total = time.perf_counter() - t0
        d = dict(acc)
        d["(rest)"] = total - sum(d.values())
        d["TOTAL"] = total
        if best is None or total < best["TOTAL"]:
            best = d
    return best


def main() -> None:
    torch.manual_seed(0)
    tmodel = TorchResNet18().eval().to(memory_format=torch.channels_last)
    model = bm.models.resnet18().eval()
    model.load_state_dict({k: bm.tensor(v.detach().contiguous().numpy()) for k, v in tmodel.state_dict().items()})
    time_bessemer_leaves(model)
    time_torch_leaves(tmodel)
    for batch in (8, 1):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 224, 224), dtype=np.float32)
        tx = torch.from_numpy(x).contiguous(memory_format=torch.channels_last)
        with bm.no_grad():
            ours = best_breakdown(lambda x=x: model(bm.from_numpy(x)).numpy())
        with torch.no_grad():
            theirs = best_breakdown(lambda tx=tx: tmodel(tx))
        print(f"ResNet-18 batch {batch}, ms (threads={bm.get_num_threads()}): bessemer, torch channels_last, ratio")
        for k in sorted(ours, key=lambda k: -ours[k]):
            a, b = ours[k] * 1e3, theirs.get(k, float("nan")) * 1e3
            print(f"  {k:20s} {a:8.2f} {b:8.2f}  {b / a:5.2f}x")


if __name__ == "__main__":
    main()
