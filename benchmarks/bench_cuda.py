"""bessemer's `cuda` device against torch CUDA on the same GPU, in one process.

    python benchmarks/bench_cuda.py                         # on a machine with an NVIDIA GPU
    python benchmarks/bench_cuda.py --json cuda.json        # the same, and the results as JSON
    python benchmarks/bench_cuda.py --device cpu --quick    # smoke run anywhere (tiny sizes)
    python benchmarks/bench_cuda.py --device metal-sim --quick

Rows: (a) add of two 100M float32 tensors, GB/s and the fraction of the GPU's peak memory bandwidth
(goal >= 70%); (b) sum over dim 0 and dim 1 of a (16384, 16384) float32 tensor, likewise (goal >=
60%); (c) a 4096x4096 float32 matmul, TFLOP/s, torch with TF32 off; (d) ResNet-18 inference at
batch 64 (224x224), ms per batch, the same weights in both; (e) the launch overhead of a tiny op:
10000 adds of 1-element tensors, then one device synchronize, microseconds per op.

Timing: warm-up calls first (bessemer compiles each kernel on its first launch), then rounds of n
calls closed by a device synchronize on each side (bm.synchronize(device), torch.cuda.synchronize());
the best round's mean counts, engines interleaved round by round as in common.compare. Ratio =
torch time / bessemer time (>1: bessemer faster). Each row also checks that bessemer's result
matches torch's (max abs difference; float32 sums in different orders differ in the last bits).

Peak bandwidth: 2 x memory clock x bus width from torch.cuda.get_device_properties (the CUDA
driver's attributes if torch lacks them), unless --peak-gbps gives it (H200: 4800 GB/s by spec).
torch runs on CUDA when bessemer does and torch has CUDA; otherwise on the CPU (said in the header).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import pathlib
import sys
import time
from collections.abc import Callable

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from common import THREADS, bm, np, torch  # noqa: E402

H200_PEAK_GBPS = 4800.0

FULL = dict(add_n=100_000_000, sum_n=16384, mm_n=4096, resnet_batch=64, resnet_hw=224, tiny_n=10_000,
            min_time=0.2, rounds=3, repeats=3)
QUICK = dict(add_n=100_000, sum_n=256, mm_n=128, resnet_batch=2, resnet_hw=32, tiny_n=200,
             min_time=0.005, rounds=1, repeats=2)


# ---- devices ----

class Engine:
    """One side of the comparison: a name, its device and how to wait for it."""

    def __init__(self, name: str, device, sync: Callable[[], None]):
        self.name, self.device, self.sync = name, device, sync


def bessemer_engine(spec: str) -> Engine | None:
    try:
        dev = bm.device(spec)
    except Exception as e:  # noqa: BLE001  (no such device in this build or on this machine)
        print(f"bench_cuda: skipped, bessemer has no device {spec!r} here: {e}\n"
              "  (a smoke run on any machine: python benchmarks/bench_cuda.py --device cpu --quick)")
        return None
    return Engine("bessemer", dev, lambda: bm.synchronize(dev))


def torch_engine(bm_dev) -> tuple[Engine, str]:
    """torch CUDA when bessemer runs on CUDA and torch has it; else torch on the CPU, with a note."""
    if bm_dev.type == "cuda":
        if torch.cuda.is_available():
            index = bm_dev.index or 0
            tdev = torch.device("cuda", index)
            return Engine("torch", tdev, lambda: torch.cuda.synchronize(tdev)), ""
        return (Engine("torch", torch.device("cpu"), lambda: None),
                f"torch {torch.__version__} has no CUDA here: comparing against torch on the CPU "
                f"({THREADS} threads), not the same GPU")
    return Engine("torch", torch.device("cpu"), lambda: None), f"torch on the CPU ({THREADS} threads)"


def peak_bandwidth(bm_dev, tdev, flag: float | None) -> tuple[float | None, str]:
    """(GB/s, where it came from) for the fraction-of-peak columns; None where it means nothing."""
    if flag is not None:
        return flag, "--peak-gbps"
    if bm_dev.type != "cuda":
        return None, "no peak for a CPU device (pass --peak-gbps for one)"
    index = bm_dev.index or 0
    if tdev.type == "cuda":
        p = torch.cuda.get_device_properties(index)
        clock_khz, bus_bits = getattr(p, "memory_clock_rate", 0), getattr(p, "memory_bus_width", 0)
        if clock_khz and bus_bits:
            return 2 * clock_khz * 1e3 * bus_bits / 8 / 1e9, (
                f"{p.name}: 2 x {clock_khz / 1e3:.0f} MHz x {bus_bits} bits, torch's device properties")
    try:  # the CUDA driver API: CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE (kHz) 36, GLOBAL_MEMORY_BUS_WIDTH 37
        lib = ctypes.CDLL("libcuda.so.1")
        dev, clock, bus = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        if (lib.cuInit(0) == 0 and lib.cuDeviceGet(ctypes.byref(dev), index) == 0
                and lib.cuDeviceGetAttribute(ctypes.byref(clock), 36, dev) == 0
                and lib.cuDeviceGetAttribute(ctypes.byref(bus), 37, dev) == 0 and clock.value and bus.value):
            return 2 * clock.value * 1e3 * bus.value / 8 / 1e9, (
                f"2 x {clock.value / 1e3:.0f} MHz x {bus.value} bits, CUDA driver attributes")
    except OSError:
        pass
    return H200_PEAK_GBPS, "H200 default (pass --peak-gbps for another GPU)"


# ---- timing ----

def best_time(fn: Callable[[], object], sync: Callable[[], None], *, min_time: float, repeats: int,
              warmup: int) -> float:
    """Best mean seconds per call over `repeats` rounds of n calls (n makes a round >= min_time),
    each round closed by a device synchronize: asynchronous launches are all counted."""
    for _ in range(warmup):
        fn()
    sync()
    n = 1
    while True:  # calibrate the calls per round
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        dt = time.perf_counter() - t0
        if dt >= min_time:
            break
        n = max(n * 2, min(int(n * min_time / max(dt, 1e-9)), n * 100))
    best = dt / n
    for _ in range(repeats - 1):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


class Bench:
    """Times bessemer and torch side by side, prints a row per benchmark and keeps the results."""

    def __init__(self, bme: Engine, te: Engine, peak: float | None, cfg: dict):
        self.bm, self.t, self.peak, self.cfg = bme, te, peak, cfg
        self.results: list[dict] = []

    def row(self, name: str, fns: dict[str, Callable[[], object]], *, work: float, unit: str, scale: float,
            per: float = 1.0, time_unit: str = "ms", bandwidth: bool = False, goal: float | None = None,
            diff: float | None = None) -> dict:
        """`work` units per call (bytes, flops, images); `per`: ops per call, for per-op times;
        bandwidth: print each side's fraction of peak; goal: bessemer's fraction of peak to reach."""
        engines = {"bessemer": self.bm, "torch": self.t}
        times = {k: float("inf") for k in engines}
        for r in range(self.cfg["rounds"]):  # interleaved, so machine noise hits both alike
            for k, e in engines.items():
                times[k] = min(times[k], best_time(fns[k], e.sync, min_time=self.cfg["min_time"],
                                                   repeats=self.cfg["repeats"], warmup=3 if r == 0 else 1))
        tscale = {"ms": 1e3, "us": 1e6}[time_unit]
        res = {"name": name, "unit": unit, "time_unit": time_unit, "work_per_call": work, "ops_per_call": per}
        parts = []
        for k, t in times.items():
            rate = work / t / scale
            res[f"{k}_seconds_per_op"] = t / per
            res[f"{k}_rate"] = rate
            s = f"{k} {t / per * tscale:9.3f} {time_unit} {rate:9.2f} {unit}"
            if bandwidth and self.peak:
                res[f"{k}_fraction_of_peak"] = rate / self.peak
                s += f" {100 * rate / self.peak:5.1f}% peak"
            parts.append(s)
        res["ratio_torch_over_bessemer"] = times["torch"] / times["bessemer"]
        verdict = ""
        if goal is not None:
            res["goal_fraction_of_peak"] = goal
            if self.peak:
                met = res["bessemer_rate"] / self.peak >= goal
                res["goal_met"] = met
                verdict = f"  goal >= {100 * goal:.0f}% peak: {'MET' if met else 'NOT MET'}"
        if diff is not None:
            res["max_abs_diff"] = diff
            verdict += f"  max|diff| {diff:.2g}"
        print(f"{name:<34} | " + " | ".join(parts) + f" | vs torch: {res['ratio_torch_over_bessemer']:.2f}x"
              + verdict, flush=True)
        self.results.append(res)
        return res


def max_diff(ours, theirs) -> float:
    a = ours.numpy().astype(np.float64)
    b = theirs.detach().cpu().numpy().astype(np.float64)
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def both(a: np.ndarray, bme: Engine, te: Engine):
    """The same array on bessemer's device and torch's."""
    return bm.tensor(a, device=bme.device), torch.from_numpy(a).to(te.device)


def release(bme: Engine, te: Engine) -> None:
    """Give cached device memory back between sections (100M-element tensors and a 1 GiB matrix)."""
    bm.empty_cache(bme.device)
    if te.device.type == "cuda":
        torch.cuda.empty_cache()


# ---- the benchmarks ----

def bench_add(b: Bench, rng) -> None:
    n = b.cfg["add_n"]
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    (bx, tx), (by, ty) = both(x, b.bm, b.t), both(y, b.bm, b.t)
    k = min(n, 1 << 20)
    diff = max_diff((bx + by)[-k:], (tx + ty)[-k:])
    del x, y
    # A fresh output each call, as `a + b` gives; bytes: two inputs read, one output written.
    b.row(f"add float32[{n / 1e6:g}M]", {"bessemer": lambda: bx + by, "torch": lambda: tx + ty},
          work=3 * 4 * n, unit="GB/s", scale=1e9, bandwidth=True, goal=0.70, diff=diff)


def bench_sum(b: Bench, rng) -> None:
    n = b.cfg["sum_n"]
    x = rng.random((n, n), dtype=np.float32)
    bx, tx = both(x, b.bm, b.t)
    del x
    for dim in (0, 1):
        diff = max_diff(bx.sum(dim=dim), tx.sum(dim=dim))
        # Bytes: the matrix read once, the (n,) result written.
        b.row(f"sum dim={dim} float32[{n}, {n}]",
              {"bessemer": lambda d=dim: bx.sum(dim=d), "torch": lambda d=dim: tx.sum(dim=d)},
              work=4 * (n * n + n), unit="GB/s", scale=1e9, bandwidth=True, goal=0.60, diff=diff)


def bench_matmul(b: Bench, rng) -> None:
    n = b.cfg["mm_n"]
    x = rng.standard_normal((n, n), dtype=np.float32)
    y = rng.standard_normal((n, n), dtype=np.float32)
    (bx, tx), (by, ty) = both(x, b.bm, b.t), both(y, b.bm, b.t)
    diff = max_diff(bx @ by, tx @ ty)
    b.row(f"matmul float32 {n}x{n}x{n}", {"bessemer": lambda: bx @ by, "torch": lambda: tx @ ty},
          work=2.0 * n ** 3, unit="TFLOP/s", scale=1e12, diff=diff)


def bench_resnet18(b: Bench, rng) -> None:
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))
    from torch_resnet import TorchResNet18  # the torchvision-free torch ResNet-18 of the tests

    batch, hw = b.cfg["resnet_batch"], b.cfg["resnet_hw"]
    torch.manual_seed(0)
    tmodel = TorchResNet18().eval()
    model = bm.models.resnet18().eval()
    model.load_state_dict({k: bm.tensor(v.numpy()) for k, v in tmodel.state_dict().items()})
    model.to(b.bm.device)
    tmodel.to(b.t.device)
    x = rng.standard_normal((batch, 3, hw, hw), dtype=np.float32)
    bx, tx = both(x, b.bm, b.t)

    def run_bm():
        with bm.no_grad():
            return model(bx)

    def run_torch():
        with torch.no_grad():
            return tmodel(tx)

    diff = max_diff(run_bm(), run_torch())
    b.row(f"resnet18 inference batch {batch} {hw}x{hw}", {"bessemer": run_bm, "torch": run_torch},
          work=batch, unit="images/s", scale=1.0, diff=diff)


def bench_launch(b: Bench, rng) -> None:
    n = b.cfg["tiny_n"]
    ba, ta = both(np.ones(1, dtype=np.float32), b.bm, b.t)
    bb, tb = both(np.full(1, 2.0, dtype=np.float32), b.bm, b.t)

    def loop_bm():
        for _ in range(n):
            ba + bb

    def loop_torch():
        for _ in range(n):
            ta + tb

    b.row(f"launch: add float32[1] x {n}", {"bessemer": loop_bm, "torch": loop_torch},
          work=n, unit="Mop/s", scale=1e6, per=n, time_unit="us", diff=max_diff(ba + bb, ta + tb))


BENCHES = {"add": bench_add, "sum": bench_sum, "matmul": bench_matmul, "resnet18": bench_resnet18,
           "launch": bench_launch}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda", help="bessemer's device (default cuda; cpu or metal-sim "
                    "with --quick for a smoke run)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes and short rounds: a smoke run, not a timing")
    ap.add_argument("--peak-gbps", type=float, default=None,
                    help=f"peak memory bandwidth in GB/s (default: read from the GPU; else {H200_PEAK_GBPS:g}, H200)")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    ap.add_argument("--only", nargs="+", choices=list(BENCHES), help="run only these benchmarks")
    args = ap.parse_args([] if argv is None else argv)

    bme = bessemer_engine(args.device)
    if bme is None:
        return 1
    te, note = torch_engine(bme.device)
    if bme.device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False  # full float32 products, as bessemer computes
        torch.backends.cudnn.allow_tf32 = False  # ResNet-18's convolutions too
    peak, peak_src = peak_bandwidth(bme.device, te.device, args.peak_gbps)
    cfg = QUICK if args.quick else FULL

    print(f"\n== cuda: bessemer {bme.device} vs torch {te.device} (torch {torch.__version__}, bessemer "
          f"{bm.__version__}{'; --quick: smoke sizes, times mean nothing' if args.quick else ''})")
    if note:
        print(f"   {note}")
    print("   peak memory bandwidth: " + (f"{peak:.0f} GB/s ({peak_src})" if peak else peak_src))
    print(("   TF32 off in torch (matmul and cuDNN); " if te.device.type == "cuda" else "   ")
          + "ratio = torch time / bessemer time, >1 = bessemer faster")

    b = Bench(bme, te, peak, cfg)
    rng = np.random.default_rng(0)
    for name in args.only or BENCHES:
        BENCHES[name](b, rng)
        release(bme, te)  # the benchmark's tensors are gone with its frame

    if args.json:
        out = {"bessemer_device": str(bme.device), "torch_device": str(te.device), "note": note,
               "torch_version": torch.__version__, "bessemer_version": bm.__version__, "quick": args.quick,
               "peak_gbps": peak, "peak_source": peak_src, "sizes": cfg, "results": b.results}
        if te.device.type == "cuda":
            out["gpu"] = torch.cuda.get_device_name(te.device)
        pathlib.Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
