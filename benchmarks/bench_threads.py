"""Threads: two Python threads doing independent matmuls, against one thread doing both threads'
work, on the CPU with one thread per op (bm.set_num_threads(1), which sizes the BLAS pool too), so
each Python thread can have a core of its own. Kernels run without the GIL, so the two threads
overlap: the goal is a wall time clearly under 2x one thread's (ideal: 1x with two free cores).
The control row removes the GIL release (a test hook): the threads then take turns, about 2x.

    python benchmarks/bench_threads.py        (or: python benchmarks/run.py threads)
"""

from __future__ import annotations

import os
import threading
import time

import bessemer as bm

N, REPS = 512, 40


def _work(a, b, reps):
    for _ in range(reps):
        (a @ b).numpy()


def _timed(threads: int, reps: int) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) for `threads` threads each doing `reps` matmuls."""
    a = [bm.randn(N, N) for _ in range(threads)]
    b = [bm.randn(N, N) for _ in range(threads)]
    ts = [threading.Thread(target=_work, args=(a[i], b[i], reps)) for i in range(threads)]
    t0, c0 = time.perf_counter(), time.process_time()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.perf_counter() - t0, time.process_time() - c0


def _ratio() -> tuple[float, float, float, float]:
    """One thread's wall time, two threads' wall time, their ratio, and the cores the two threads
    kept busy on average (CPU time / wall time: 2.0 when they overlap on two idle cores, 1.0 when
    they take turns; lower on a machine busy with other work)."""
    _timed(2, 2)  # warm-up: BLAS buffers, allocator caches
    one = min(_timed(1, REPS)[0] for _ in range(3))
    two, cores = min((w, c / w) for w, c in (_timed(2, REPS) for _ in range(3)))  # each thread: REPS matmuls
    return one, two, two / one, cores


def main() -> None:
    before = bm.get_num_threads()
    bm.set_num_threads(1)
    try:
        print(f"two threads x {REPS} matmuls {N}x{N} (cpu, 1 thread per op) vs one thread x {REPS}:")
        one, two, r, cores = _ratio()
        print(f"  GIL released: one thread {one * 1e3:8.1f} ms, two threads {two * 1e3:8.1f} ms, "
              f"ratio {r:4.2f}x, cores busy {cores:4.2f} (goal < 1.6x; 2.0x = no overlap)  "
              f"{'OK' if r < 1.6 else 'MISSED'}")
        bm._core._set_gil_release_for_testing(False)
        try:
            one, two, r, cores = _ratio()
        finally:
            bm._core._set_gil_release_for_testing(True)
        print(f"  control, GIL held: one thread {one * 1e3:8.1f} ms, two threads {two * 1e3:8.1f} ms, "
              f"ratio {r:4.2f}x, cores busy {cores:4.2f}")
        if os.cpu_count() and os.getloadavg()[0] > os.cpu_count():
            print(f"  note: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: other work competes "
                  "for the cores, so the ratio understates the overlap")
    finally:
        bm.set_num_threads(before)


if __name__ == "__main__":
    main()
