"""Generate docs/ops.md — the op x backend x dtype coverage matrix — from the op registry.

    python tools/coverage_matrix.py            # rewrite docs/ops.md
    python tools/coverage_matrix.py --check    # exit 1 if docs/ops.md is stale

Cell legend: "✓" a kernel exists; "✗" the op declares the dtype but the device has no kernel (a bug:
tests/test_coverage.py fails on it); "—" the op does not take that dtype (or the device never does,
like float64 on Metal).
"""

from __future__ import annotations

import pathlib
import sys

import bessemer as bm
from bessemer import _core

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "ops.md"
DTYPES = [bm.float32, bm.float16, bm.bfloat16, bm.float64, bm.int8, bm.uint8, bm.int16, bm.int32, bm.int64, bm.bool]


def device_takes(device: str, dtype) -> bool:
    return not (dtype == bm.float64 and not device.startswith("cpu"))


def matrix():
    """[(op, device, dtype, state)] with state in {"ok", "missing", "n/a"}."""
    cells = []
    for row in _core.op_table():
        for device, have in row["kernels"].items():
            for dt in DTYPES:
                declared = dt in row["dtypes"] and device_takes(device, dt)
                state = "ok" if dt in have else ("missing" if declared else "n/a")
                cells.append((row["name"], device, dt, state))
    return cells


def render() -> str:
    rows = _core.op_table()
    # The same page on every machine: metal and cuda run the Metal backend's kernel table, which the
    # simulator's column shows (matrix() still checks every device this machine has).
    devices = [d for d in rows[0]["kernels"] if d in ("cpu", "metal-sim:0")]
    sym = {"ok": "✓", "missing": "✗", "n/a": "—"}
    cells = {(o, d, t.name): s for o, d, t, s in matrix()}
    out = ["# Op coverage", "",
           "Generated from the op registry (csrc/core/op_table.h) by `python tools/coverage_matrix.py`;",
           "CI fails when this file is stale or a declared cell has no kernel.", "",
           "✓ kernel present · ✗ declared but missing · — not applicable.",
           "Devices `metal` and `cuda` run the same kernels as `metal-sim` (one shader source).", ""]
    for device in devices:
        out += [f"## {device}", "", "| op | " + " | ".join(t.name for t in DTYPES) + " |",
                "|---|" + "---|" * len(DTYPES)]
        for r in rows:
            out.append(f"| {r['name']} | " + " | ".join(sym[cells[(r['name'], device, t.name)]] for t in DTYPES) + " |")
        out.append("")
    out += ["## Gradients", "",
            "Each differentiable row's gradient rule (csrc/autograd/rules_table.cpp, rules_nn.cpp), shown as the",
            "`grad_fn` name torch gives the node; rows without one are not differentiable (integer or bool",
            "results, factories) or are backward kernels themselves.", "",
            "| op | grad_fn |", "|---|---|"]
    for r in rows:
        out.append(f"| {r['name']} | {r['grad'] or '—'} |")
    out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    text = render()
    if "--check" in sys.argv:
        if not DOC.exists() or DOC.read_text() != text:
            print(f"{DOC} is stale: run python tools/coverage_matrix.py", file=sys.stderr)
            sys.exit(1)
    else:
        DOC.parent.mkdir(exist_ok=True)
        DOC.write_text(text)
        print(f"wrote {DOC}")
