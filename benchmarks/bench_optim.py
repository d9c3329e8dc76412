"""Optimizer steps on CPU against torch: Adam (and SGD with momentum) over ResNet-18's parameter
shapes (bm.models.resnet18(), ~11.7M parameters in 62 tensors), same gradients, same process.
bessemer runs one fused kernel per parameter; torch's foreach=True runs its multi-tensor ops,
foreach=False its per-parameter for-loop (the formula bessemer matches).

    PYTHONPATH=python python benchmarks/run.py optim
"""

# common first: it sets the thread counts before torch and bessemer load their BLAS
from common import bm, compare, header, torch  # noqa: I001
import numpy as np


def resnet18_params():
    """ResNet-18's parameter tensors as float32 arrays with random gradients."""
    rng = np.random.default_rng(0)
    shapes = [tuple(p.shape) for p in bm.models.resnet18().parameters()]
    return [(rng.standard_normal(s).astype(np.float32) * 0.01, rng.standard_normal(s).astype(np.float32))
            for s in shapes]


def setup(arrays, make_bm, make_torch):
    ps = []
    for w, g in arrays:
        p = bm.nn.Parameter(bm.tensor(w))
        p.grad = bm.tensor(g)
        ps.append(p)
    tps = {}
    for foreach in (True, False):
        tp = []
        for w, g in arrays:
            t = torch.nn.Parameter(torch.tensor(w))
            t.grad = torch.tensor(g)
            tp.append(t)
        tps[foreach] = (tp, make_torch(tp, foreach))
    return make_bm(ps), tps


def main() -> None:
    arrays = resnet18_params()
    n = sum(w.size for w, _ in arrays)
    header(f"optimizer step over resnet18's {len(arrays)} parameters ({n / 1e6:.2f}M elements, cpu)")
    for name, make_bm, make_torch in [
        ("Adam", lambda ps: bm.optim.Adam(ps, lr=1e-3),
         lambda ps, fe: torch.optim.Adam(ps, lr=1e-3, foreach=fe)),
        ("AdamW amsgrad", lambda ps: bm.optim.AdamW(ps, lr=1e-3, amsgrad=True),
         lambda ps, fe: torch.optim.AdamW(ps, lr=1e-3, amsgrad=True, foreach=fe)),
        ("SGD momentum=0.9 nesterov wd=1e-4", lambda ps: bm.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True,
                                                                       weight_decay=1e-4),
         lambda ps, fe: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4, foreach=fe)),
    ]:
        opt, tps = setup(arrays, make_bm, make_torch)
        # bytes touched by one fused pass: Adam reads param, grad, 2 moments and writes 3 (float32)
        compare(f"{name} step", {"bessemer": opt.step, "torch foreach=True": tps[True][1].step,
                                 "torch foreach=False": tps[False][1].step}, work=n, unit="Gelem/s")


if __name__ == "__main__":
    main()
