"""Elementwise ops: per-call overhead on tiny tensors, and memory bandwidth on large ones."""

from __future__ import annotations

import numpy as np
import torch

import bessemer as bm
from common import compare, header

BIG = 10_000_000


def tiny_add() -> None:
    # Four elements: the time is all call overhead (binding, dispatch, allocation), no arithmetic.
    a_np = np.arange(4, dtype=np.float32)
    b_np = np.ones(4, dtype=np.float32)
    a, b = bm.tensor(a_np), bm.tensor(b_np)
    ta, tb = torch.from_numpy(a_np.copy()), torch.from_numpy(b_np.copy())
    compare("add float32[4] (per-op overhead)", {
        "bessemer": lambda: a + b,
        "torch": lambda: ta + tb,
        "numpy": lambda: a_np + b_np,
    }, goal=("torch", 1.0))


def big_add() -> None:
    # A fresh output each call, as `a + b` gives: allocation and page faults count, as for users.
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal(BIG, dtype=np.float32)
    b_np = rng.standard_normal(BIG, dtype=np.float32)
    a, b = bm.tensor(a_np), bm.tensor(b_np)
    ta, tb = torch.from_numpy(a_np.copy()), torch.from_numpy(b_np.copy())
    # Bytes moved: read two inputs, write one output.
    compare("add float32[10M] fresh output", {
        "bessemer": lambda: a + b,
        "numpy": lambda: a_np + b_np,
        "torch": lambda: ta + tb,
    }, work=3 * 4 * BIG, unit="GB/s", goal=("numpy", 0.8))


def strided_add() -> None:
    # Transposed input plus a broadcast row: the generic strided path, for information.
    rng = np.random.default_rng(1)
    a_np = rng.standard_normal((2000, 2000), dtype=np.float32)
    r_np = rng.standard_normal((2000,), dtype=np.float32)
    a, r = bm.tensor(a_np), bm.tensor(r_np)
    ta, tr = torch.from_numpy(a_np.copy()), torch.from_numpy(r_np.copy())
    n = a_np.size
    compare("add float32[2000,2000].T + [2000] (strided)", {
        "bessemer": lambda: a.T + r,
        "numpy": lambda: a_np.T + r_np,
        "torch": lambda: ta.T + tr,
    }, work=3 * 4 * n, unit="GB/s")


def small_parallel_add() -> None:
    # 64K elements: two chunks, so one parallel region of the pool per call. The time is mostly the
    # region's start and join (waking a sleeping worker costs 5-20 us; a spinning one about 1 us).
    a_np = np.ones(65536, dtype=np.float32)
    a, ta = bm.tensor(a_np), torch.from_numpy(a_np.copy())
    compare("add float32[64K] (2-thread parallel region)", {
        "bessemer": lambda: a + a,
        "torch": lambda: ta + ta,
        "numpy": lambda: a_np + a_np,
    }, goal=("torch", 1.0))


def transcendentals() -> None:
    # float32 exp/log/sin/cos/tanh/sigmoid over a ResNet-sized activation: vector math against torch's.
    rng = np.random.default_rng(2)
    x_np = rng.standard_normal((8, 64, 56, 56), dtype=np.float32)
    p_np = np.abs(x_np) + np.float32(0.1)  # log's domain
    x, p = bm.from_numpy(x_np), bm.from_numpy(p_np)
    tx, tp = torch.from_numpy(x_np), torch.from_numpy(p_np)
    for name, ours, theirs in (("exp", lambda: bm.exp(x), lambda: torch.exp(tx)),
                               ("log", lambda: bm.log(p), lambda: torch.log(tp)),
                               ("sin", lambda: bm.sin(x), lambda: torch.sin(tx)),
                               ("cos", lambda: bm.cos(x), lambda: torch.cos(tx)),
                               ("tanh", lambda: bm.tanh(x), lambda: torch.tanh(tx)),
                               ("sigmoid", lambda: bm.sigmoid(x), lambda: torch.sigmoid(tx))):
        compare(f"{name} float32 (8, 64, 56, 56)", {"bessemer": ours, "torch": theirs},
                work=2 * x_np.nbytes, unit="GB/s", goal=("torch", 1.0))


def main() -> None:
    header("elementwise")
    tiny_add()
    small_parallel_add()
    big_add()
    strided_add()
    transcendentals()


if __name__ == "__main__":
    main()
