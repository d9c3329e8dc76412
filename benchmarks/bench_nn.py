"""nn ops: bessemer CPU against torch CPU (same thread count), one function per benchmark; main()
runs them all. Add a benchmark as a new function and a call in main()."""

from __future__ import annotations

import numpy as np

from common import bm, compare, header, torch

F = bm.nn.functional


def bench_conv2d_3x3() -> None:
    """A ResNet-18 layer1 convolution: 8x64x56x56, 64 3x3 filters, padding 1, float32."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 64, 56, 56), dtype=np.float32)
    w = rng.standard_normal((64, 64, 3, 3), dtype=np.float32) * 0.05
    bx, bw = bm.from_numpy(x), bm.from_numpy(w)
    tx, tw = torch.from_numpy(x), torch.from_numpy(w)
    flops = 2.0 * 8 * 64 * 56 * 56 * 64 * 9
    compare("conv2d 8x64x56x56, 64x3x3, pad 1 float32", {
        "bessemer": lambda: F.conv2d(bx, bw, padding=1),
        "torch": lambda: torch.nn.functional.conv2d(tx, tw, padding=1),
    }, work=flops, goal=("torch", 0.5))


def main() -> None:
    header("nn")
    bench_conv2d_3x3()


if __name__ == "__main__":
    main()
