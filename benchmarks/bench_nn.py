"""nn ops: bessemer CPU against torch CPU (same thread count), one function per benchmark; main()
runs them all. Add a benchmark as a new function and a call in main()."""

from __future__ import annotations

import numpy as np

from common import bm, compare, header, torch

F = bm.nn.functional


def bench_max_pool() -> None:
    """ResNet-18's pooling: the stem's max_pool2d and the head's global average, float32."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 64, 112, 112), dtype=np.float32)
    bx, tx = bm.from_numpy(a), torch.from_numpy(a)
    compare("max_pool2d 3x3 s2 p1 (8, 64, 112, 112) float32", {
        "bessemer": lambda: F.max_pool2d(bx, 3, 2, 1),
        "torch": lambda: torch.nn.functional.max_pool2d(tx, 3, 2, 1),
    }, work=a.nbytes, unit="GB/s")
    h = rng.standard_normal((8, 512, 7, 7), dtype=np.float32)
    bh, th = bm.from_numpy(h), torch.from_numpy(h)
    compare("adaptive_avg_pool2d 1x1 (8, 512, 7, 7) float32", {
        "bessemer": lambda: F.adaptive_avg_pool2d(bh, 1),
        "torch": lambda: torch.nn.functional.adaptive_avg_pool2d(th, 1),
    }, work=h.nbytes, unit="GB/s")


def main() -> None:
    header("nn")
    bench_max_pool()


if __name__ == "__main__":
    main()
