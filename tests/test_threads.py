"""Threads: the GIL is released while kernels run and while the host waits for a device (shown by
a Python counter that advances during a kernel, and not when a control keeps the GIL held), and a
stress test where 8 threads share one model, one generator per device and every device: outputs
and gradients equal the serial ones bit for bit, random draws never repeat across threads, and
nothing crashes or deadlocks. The speed-up itself is a benchmark (benchmarks/bench_threads.py):
timings have no place in tests."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

import bessemer as bm
from harness import DEVICES

TIMEOUT = 120  # seconds a group of threads may take before the test calls it a deadlock


def run_threads(fns, timeout=TIMEOUT):
    """Runs each fn in its own thread; returns their results. Fails when a thread is still alive at
    the deadline (a deadlock) and re-raises the first exception a thread raised."""
    results, errors = [None] * len(fns), []

    def wrap(i, fn):
        try:
            results[i] = fn()
        except BaseException as e:  # noqa: BLE001 - reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(i, fn), daemon=True) for i, fn in enumerate(fns)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    alive = sum(t.is_alive() for t in threads)
    assert alive == 0, f"{alive} of {len(threads)} threads still running after {timeout} s: deadlock"
    if errors:
        raise errors[0]
    return results


def test_run_threads_reports_a_hung_thread():
    """Control: the deadlock check fires for a thread that never finishes."""
    never = threading.Event()
    with pytest.raises(AssertionError, match="deadlock"):
        run_threads([lambda: never.wait(30)], timeout=0.2)
    never.set()


# ---- the GIL is released in kernels and device waits ----

def _kernel_work(device):
    """A kernel (or a device wait) that takes a while: a matmul, read back."""
    # The simulator runs the shader on the host, lane by lane; a real GPU needs a large product to
    # be busy long enough for the main thread to be seen running.
    n = {"cpu": 768, "metal-sim": 96}.get(bm.device(device).type, 3072)
    a = bm.randn(n, n, device=device)
    return lambda: (a @ a).numpy()


def counter_advance_during(work, reps=3):
    """How far a counter, bumped by the main thread, advances while `work()` runs in another thread,
    for each of `reps` runs. With the switch interval raised nobody is preempted, so the counter
    can move during `work()` only if work releases the GIL itself."""
    counter, seen, done = [0], [], threading.Event()

    def worker():
        try:
            for _ in range(reps):
                c0 = counter[0]
                work()
                seen.append(counter[0] - c0)
        finally:
            done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        t = threading.Thread(target=worker, daemon=True)
        t.start()
        deadline = time.monotonic() + TIMEOUT
        while not done.is_set() and time.monotonic() < deadline:
            counter[0] += 1
            time.sleep(0.0005)  # hands the GIL over, so the worker runs between kernels
    finally:
        sys.setswitchinterval(old)
    t.join(TIMEOUT)
    assert not t.is_alive() and len(seen) == reps
    return seen


@pytest.mark.parametrize("device", DEVICES)
def test_gil_released_while_kernels_run(device):
    assert bm._core._gil_released_in_kernels()
    seen = counter_advance_during(_kernel_work(device))
    assert sum(seen) > 0, f"the main thread never ran during a kernel: {seen}"


@pytest.mark.parametrize("device", DEVICES)
def test_gil_held_control(device):
    """Control: with the release hooks removed the same kernels hold the GIL, and the counter
    stands still, so the test above measures the release and nothing else."""
    work = _kernel_work(device)
    bm._core._set_gil_release_for_testing(False)
    try:
        assert counter_advance_during(work) == [0, 0, 0]
    finally:
        bm._core._set_gil_release_for_testing(True)


def test_gil_released_while_waiting_for_a_device():
    """metal-sim runs its queued kernels when a read waits for them: bm.synchronize and .numpy()
    wait without the GIL."""
    dev = next(d for d in DEVICES if d != "cpu")
    a = bm.randn(96, 96, device=dev)
    queued = []

    def work():
        queued.append(a @ a)  # encoded only (the batch runs at the wait)
        bm.synchronize(dev)
    assert sum(counter_advance_during(work)) > 0


# ---- stress: 8 threads share one model, one generator per device and every device ----

N_THREADS, ITERS, DRAW = 8, 20, 64


def _model(device):
    nn = bm.nn
    bm.manual_seed(3)
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                         nn.Linear(4 * 6 * 6, 16), nn.GELU(), nn.Linear(16, 5)).to(device).eval()


def _inputs(device):
    rng = np.random.default_rng(0)
    return [[bm.tensor(rng.standard_normal((3, 2, 6, 6)).astype(np.float32), device=device) for _ in range(ITERS)]
            for _ in range(N_THREADS)]


def _step(model, x):
    """Forward, and the parameters' gradients by autograd.grad (a graph of its own per call)."""
    params = list(model.parameters())
    out = model(x)
    grads = bm.autograd.grad((out * out).mean(), params)
    return [out.numpy(), *(g.numpy() for g in grads)]


def draws_partition_stream(draws, stream) -> bool:
    """True when the draws are exactly the stream cut into draw-sized pieces, each piece once: every
    draw took a fresh counter range, and no two draws repeat each other."""
    pieces = sorted(row.tobytes() for row in np.asarray(stream).view(np.uint32).reshape(-1, DRAW))
    got = sorted(np.asarray(d).view(np.uint32).tobytes() for d in draws)
    return got == pieces


def test_draw_check_catches_a_repeat():
    """Control: two draws from one counter range (a racy generator) fail the check."""
    g = bm.Generator("cpu").manual_seed(1)
    a = bm.rand(DRAW, generator=g).numpy()
    g.set_state((1, 0))
    b = bm.rand(DRAW, generator=g).numpy()
    stream = bm.rand(2 * DRAW, generator=bm.Generator("cpu").manual_seed(1)).numpy()
    assert not draws_partition_stream([a, b], stream)
    c = bm.rand(DRAW, generator=g).numpy()
    assert draws_partition_stream([c, a], stream)


def test_eight_threads_share_model_generator_and_devices():
    models = {d: _model(d) for d in DEVICES}
    inputs = {d: _inputs(d) for d in DEVICES}
    serial = {d: [[_step(models[d], x) for x in row] for row in inputs[d]] for d in DEVICES}
    gens = {d: bm.Generator(d).manual_seed(11) for d in DEVICES}

    def thread(i):
        draws, outs = {d: [] for d in DEVICES}, {d: [] for d in DEVICES}
        for k in range(ITERS):
            for d in DEVICES:
                outs[d].append(_step(models[d], inputs[d][i][k]))
                draws[d].append(bm.rand(DRAW, generator=gens[d], device=d).numpy())
        return outs, draws

    results = run_threads([lambda i=i: thread(i) for i in range(N_THREADS)])
    for d in DEVICES:
        for i, (outs, _) in enumerate(results):
            for k in range(ITERS):
                for a, b in zip(outs[d][k], serial[d][i][k]):
                    assert a.tobytes() == b.tobytes(), f"{d}: thread {i}, iteration {k} differs from the serial run"
        draws = [x for _, dr in results for x in dr[d]]
        stream = bm.rand(len(draws) * DRAW, generator=bm.Generator(d).manual_seed(11), device=d).numpy()
        assert draws_partition_stream(draws, stream), f"{d}: draws from different threads overlap or skip"


def test_backward_in_threads_into_shared_parameters():
    """Each thread builds its own graph over shared parameters and calls backward(): .grad ends up
    as the sum of every thread's gradient (in arrival order, so to rounding)."""
    for d in DEVICES:
        model = _model(d)
        params = list(model.parameters())
        xs = [row[0] for row in _inputs(d)]

        def loss(x, model=model):
            out = model(x)
            return (out * out).mean()

        expected = [np.zeros(p.shape, np.float64) for p in params]
        for x in xs:
            for e, g in zip(expected, bm.autograd.grad(loss(x), params)):
                e += g.numpy()

        def thread(x):
            for _ in range(2):
                loss(x).backward()
        run_threads([lambda x=x: thread(x) for x in xs])
        for p, e in zip(params, expected):
            np.testing.assert_allclose(p.grad.numpy(), 2 * e, rtol=1e-4, atol=1e-5, err_msg=d)


def test_blas_from_several_threads_same_bits():
    """OpenBLAS called by several threads at once (with its own pool of threads) gives each product
    the bits it gives alone."""
    g = bm.Generator("cpu").manual_seed(0)
    a = [bm.randn(300, 350, generator=g) for _ in range(4)]
    b = [bm.randn(350, 250, generator=g) for _ in range(4)]
    want = [(x @ y).numpy().tobytes() for x, y in zip(a, b)]

    def worker(i):
        return all((a[i] @ b[i]).numpy().tobytes() == want[i] for _ in range(8))
    assert run_threads([lambda i=i: worker(i) for i in range(4)]) == [True] * 4


def test_set_num_threads_while_threads_run_kernels():
    """Resizing the CPU pool waits for a parallel region in flight in another thread, resizing
    OpenBLAS's pool for a product in flight; reductions give the same bits at any thread count
    (their pieces are fixed)."""
    x = bm.randn(1 << 20)
    want = [x.sum().numpy().tobytes(), x.reshape(256, -1).var(dim=1).numpy().tobytes()]
    stop = threading.Event()
    before = bm.get_num_threads()

    def worker():
        n = 0
        while not stop.is_set() or n < 5:
            got = [x.sum().numpy().tobytes(), x.reshape(256, -1).var(dim=1).numpy().tobytes()]
            assert got == want
            n += 1
        return n

    a, b = bm.randn(200, 300), bm.randn(300, 100)
    ab = (a @ b).numpy()

    def blas_worker():  # BLAS's bits depend on its thread count: compared to rounding only
        n = 0
        while not stop.is_set() or n < 5:
            np.testing.assert_allclose((a @ b).numpy(), ab, rtol=1e-4, atol=1e-4)
            n += 1
        return n

    def resizer():
        try:
            for i in range(40):
                bm.set_num_threads(1 + i % 3)
        finally:
            stop.set()
    try:
        counts = run_threads([worker, worker, blas_worker, blas_worker, resizer])
    finally:
        bm.set_num_threads(before)
    assert all(c >= 5 for c in counts[:4])
