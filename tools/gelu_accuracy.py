"""Measures float32 gelu (approximate='none') of bessemer and of torch against mpmath, by range.

    python tools/gelu_accuracy.py      # max relative error and max ulp per range of x, both libraries

Why gelu is slower than torch's on the CPU: torch computes x/2 (1 + erf(x / sqrt2)), which cancels for
x < 0, and this shows what that costs in accuracy; bessemer's shared formula (shaders/erf.h) stays
within a few ulp everywhere.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import torch

import bessemer as bm

RANGES = ((-10.0, -5.0), (-5.0, -3.0), (-3.0, -1.0), (-1.0, 1.0), (1.0, 4.0))


def main() -> None:
    mp.mp.dps = 30
    x = np.linspace(-10, 4, 14_001).astype(np.float32)
    ref = np.array([float(mp.mpf(float(v)) * mp.erfc(-mp.mpf(float(v)) / mp.sqrt(2)) / 2) for v in x])
    ok = ref != 0
    spacing = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    results = {
        "bessemer": bm.nn.functional.gelu(bm.tensor(x)).numpy().astype(np.float64),
        "torch": torch.nn.functional.gelu(torch.from_numpy(x)).numpy().astype(np.float64),
    }
    for name, got in results.items():
        err = np.abs(got - ref)
        for lo, hi in RANGES:
            m = ok & (x >= lo) & (x < hi)
            rel = (err[m] / np.abs(ref[m])).max()
            ulp = (err[m] / spacing[m]).max()
            print(f"{name:8s} x in [{lo:5.1f}, {hi:4.1f}): max relative error {rel:.2e}, max {ulp:.1f} ulp")


if __name__ == "__main__":
    main()
