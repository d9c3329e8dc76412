"""Side-by-side timing: bessemer, numpy and torch (CPU, same thread count) in one process.

Each benchmark gives one callable per engine; we time them interleaved, best-of-N, and print the
time per call and bessemer's speed relative to each other engine (>1 means bessemer is faster).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

THREADS = int(os.environ.get("BENCH_THREADS", "2"))
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(THREADS))
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))

import numpy as np  # noqa: E402,F401  (re-exported for the benchmark files)
import torch  # noqa: E402

import bessemer as bm  # noqa: E402

torch.set_num_threads(THREADS)
bm.set_num_threads(THREADS)


def best_time(fn: Callable[[], object], min_time: float = 0.05, repeats: int = 7) -> float:
    """Best mean seconds per call over `repeats` rounds of at least `min_time` each."""
    fn()  # warm-up (allocations, BLAS thread start)
    n, t0 = 1, time.perf_counter()
    while True:  # calibrate the inner loop count
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time:
            break
        n = max(n * 2, int(n * min_time / max(dt, 1e-9)))
    best = dt / n
    for _ in range(repeats - 1):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def compare(name: str, engines: dict[str, Callable[[], object]], *, work: float | None = None,
            unit: str = "GFLOP/s", goal: tuple[str, float] | None = None, scale: float = 1e9) -> dict[str, float]:
    """Time each engine (interleaved rounds) and print a row. `work` (e.g. flops) adds throughput.

    goal=("numpy", 0.8) prints whether bessemer reached 0.8x numpy's speed; goal=(("torch", "torch_cl"), 1.2)
    measures against the faster of several engines.
    """
    times = {k: float("inf") for k in engines}
    for _ in range(3):  # interleave so machine noise hits every engine alike
        for k, fn in engines.items():
            times[k] = min(times[k], best_time(fn, repeats=3))
    parts = []
    for k, t in times.items():
        s = f"{k} {t * 1e6:10.2f} us"
        if work:
            s += f" ({work / t / scale:7.2f} {unit})"
        parts.append(s)
    ratios = [f"vs {k}: {times[k] / times['bessemer']:.2f}x" for k in times if k != "bessemer"]
    verdict = ""
    if goal:
        names = (goal[0],) if isinstance(goal[0], str) else tuple(goal[0])
        r = min(times[k] for k in names) / times["bessemer"]
        verdict = f"  goal >= {goal[1]}x {' and '.join(names)}: {'MET' if r >= goal[1] else 'NOT MET'}"
    print(f"{name:<42} | " + " | ".join(parts) + " | " + ", ".join(ratios) + verdict, flush=True)
    return times


def header(title: str) -> None:
    print(f"\n== {title} (threads={THREADS}; ratio = other time / bessemer time, >1 = bessemer faster)")
