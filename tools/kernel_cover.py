"""The fewest tests that launch every kernel the suite launches, for compute-sanitizer.

compute-sanitizer slows every launch by orders of magnitude, so running it over the ~9000 shader
tests of a GPU device takes hours. Every kernel's tests, though, need only one test per kernel:
this tool records which kernels each test launches and picks a cover.

    # 1. the suite (or any part) with the log on: one JSON line per test and worker
    PYTHONPATH=python:tools python -m pytest -p kernel_cover tests ...   (BESSEMER_KERNEL_LOG=DIR)
    # 2. the cover: the tests that together launch every logged kernel of DEVICE
    python tools/kernel_cover.py pick DIR --device cuda:0 -o cover.txt
    # 3. run exactly those tests (under compute-sanitizer)
    compute-sanitizer --tool racecheck python tools/kernel_cover.py run cover.txt

Kernels are logged by the Metal backend (cuda, metal-sim and metal share it): MetalBackend's
kernel log, on only while this plugin is loaded. The cover is greedy, weighted by each test's
duration: the test with the most not-yet-covered kernels per second first, which keeps slow tests
(ResNet-18) out when quicker ones launch the same kernels.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time

# ---- the pytest plugin (-p kernel_cover) ----

_state: dict = {}


def _gpu_devices():
    import bessemer as bm

    return [d for d in bm.available_devices() if d.type != "cpu"]


def pytest_configure(config):
    out = os.environ.get("BESSEMER_KERNEL_LOG")
    if not out:
        raise SystemExit("kernel_cover: set BESSEMER_KERNEL_LOG to the folder for the log")
    from bessemer import _core

    pathlib.Path(out).mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    _state["file"] = open(pathlib.Path(out) / f"{worker}.jsonl", "a")  # noqa: SIM115  (closed at unconfigure)
    _state["devices"] = _gpu_devices()
    for d in _state["devices"]:
        _core._set_kernel_log(d, True)


def pytest_runtest_setup(item):
    from bessemer import _core

    for d in _state.get("devices", []):
        _core._take_kernel_log(d)  # forget what ran between tests
    _state["t0"] = time.perf_counter()


def pytest_runtest_teardown(item):
    from bessemer import _core

    kernels = {str(d): _core._take_kernel_log(d) for d in _state.get("devices", [])}
    kernels = {k: v for k, v in kernels.items() if v}
    if kernels:
        line = {"test": item.nodeid, "seconds": time.perf_counter() - _state.get("t0", 0.0), "kernels": kernels}
        _state["file"].write(json.dumps(line) + "\n")
        _state["file"].flush()


def pytest_unconfigure(config):
    if "file" in _state:
        _state["file"].close()


# ---- the cover ----


def load(log_dir: pathlib.Path, device: str) -> dict[str, tuple[float, set[str]]]:
    tests: dict[str, tuple[float, set[str]]] = {}
    for f in sorted(log_dir.glob("*.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            ks = set(r["kernels"].get(device, []))
            if ks:
                tests[r["test"]] = (max(r["seconds"], 1e-3), ks)
    return tests


def pick(tests: dict[str, tuple[float, set[str]]]) -> tuple[list[str], set[str]]:
    """Greedy weighted set cover: most new kernels per second first."""
    every = set().union(*(ks for _, ks in tests.values())) if tests else set()
    left, chosen = set(every), []
    while left:
        best = max(tests, key=lambda t: (len(tests[t][1] & left) / tests[t][0], t))
        gain = tests[best][1] & left
        if not gain:
            break
        chosen.append(best)
        left -= gain
    return chosen, every


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pick", help="choose the tests that launch every logged kernel of a device")
    p.add_argument("log_dir", type=pathlib.Path)
    p.add_argument("--device", required=True, help="e.g. cuda:0 or metal-sim:0")
    p.add_argument("-o", "--output", type=pathlib.Path, required=True)
    r = sub.add_parser("run", help="run the tests listed in a cover file with pytest")
    r.add_argument("cover", type=pathlib.Path)
    r.add_argument("pytest_args", nargs="*")
    a = ap.parse_args(argv)
    if a.cmd == "pick":
        tests = load(a.log_dir, a.device)
        chosen, every = pick(tests)
        a.output.write_text("".join(t + "\n" for t in chosen))
        secs = sum(tests[t][0] for t in chosen)
        print(f"kernel_cover: {len(every)} kernels launched on {a.device} by {len(tests)} tests; "
              f"{len(chosen)} tests ({secs:.1f} s unsanitized) launch them all -> {a.output}")
        return 0 if chosen else 1
    import pytest

    ids = [t for t in a.cover.read_text().splitlines() if t]
    if not ids:
        print("kernel_cover: the cover file lists no tests", file=sys.stderr)
        return 1
    return int(pytest.main(["-q", "-p", "no:cacheprovider", *a.pytest_args, *ids]))


if __name__ == "__main__":
    sys.exit(main())
