"""Reductions and softmax: bessemer vs numpy vs torch.

The goal for sums is >= 0.8x numpy on a (4096, 4096) float32 array, over the last and the first
axis, contiguous and transposed (the two axes of the transposed view walk memory the other way).
"""

import numpy as np

from common import bm, compare, header, torch

N = 4096


def main():
    header("reduce")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N)).astype(np.float32)
    # Each engine reads its own copy: the array (64 MB) is twice the L3 of the machines we measure
    # on, and engines sharing one array found the half the previous engine had read last still in
    # L3 when they split it the way that engine finished it (numpy reads front to back, torch's
    # second thread starts at the middle): torch's last-axis sums ran at 69 GB/s after numpy's,
    # above what a plain read of the array reaches.
    x = bm.from_numpy(a.copy())
    t = torch.from_numpy(a.copy())
    nbytes = a.nbytes
    for layout, xa, aa, ta in (("contiguous", x, a, t), ("transposed", x.T, a.T, t.T)):
        for dim, label in ((-1, "last"), (0, "first")):
            compare(
                f"sum {label} axis ({N}, {N}) f32 {layout}",
                {
                    "bessemer": lambda xa=xa, dim=dim: xa.sum(dim),
                    "numpy": lambda aa=aa, dim=dim: aa.sum(axis=dim),
                    "torch": lambda ta=ta, dim=dim: ta.sum(dim),
                },
                work=nbytes, unit="GB/s", goal=("numpy", 0.8),
            )
    compare(f"sum all ({N}, {N}) f32",
            {"bessemer": lambda: x.sum(), "numpy": lambda: a.sum(), "torch": lambda: t.sum()},
            work=nbytes, unit="GB/s")
    for dim, label in ((-1, "last"), (0, "first")):
        compare(f"amax {label} axis ({N}, {N}) f32",
                {"bessemer": lambda dim=dim: x.amax(dim), "numpy": lambda dim=dim: a.max(axis=dim),
                 "torch": lambda dim=dim: t.amax(dim)},
                work=nbytes, unit="GB/s")
        compare(f"argmax {label} axis ({N}, {N}) f32",
                {"bessemer": lambda dim=dim: x.argmax(dim), "numpy": lambda dim=dim: a.argmax(axis=dim),
                 "torch": lambda dim=dim: t.argmax(dim)},
                work=nbytes, unit="GB/s")
        compare(f"var {label} axis ({N}, {N}) f32",
                {"bessemer": lambda dim=dim: x.var(dim), "numpy": lambda dim=dim: a.var(axis=dim, ddof=1),
                 "torch": lambda dim=dim: t.var(dim)},
                work=nbytes, unit="GB/s")

    # Short rows (a reduction over a small last dim): the per-row cost, not the bandwidth.
    for shape, op in (((1 << 20, 8), "sum"), ((1 << 18, 32), "amax")):
        r = rng.standard_normal(shape).astype(np.float32)
        xr, tr = bm.from_numpy(r.copy()), torch.from_numpy(r.copy())
        np_op = np.max if op == "amax" else np.sum
        compare(f"{op} last axis {shape} f32 (short rows)",
                {"bessemer": lambda xr=xr, op=op: getattr(xr, op)(-1), "numpy": lambda r=r, f=np_op: f(r, axis=-1),
                 "torch": lambda tr=tr, op=op: getattr(tr, op)(-1)},
                work=r.nbytes, unit="GB/s")

    s = rng.standard_normal((256, 4096)).astype(np.float32)
    xs, ts = bm.from_numpy(s), torch.from_numpy(s)
    compare("softmax last dim (256, 4096) f32",
            {"bessemer": lambda: bm.softmax(xs, -1), "torch": lambda: torch.softmax(ts, -1)},
            work=s.nbytes, unit="GB/s")
    compare("log_softmax last dim (256, 4096) f32",
            {"bessemer": lambda: bm.log_softmax(xs, -1), "torch": lambda: torch.log_softmax(ts, -1)},
            work=s.nbytes, unit="GB/s")


if __name__ == "__main__":
    main()
