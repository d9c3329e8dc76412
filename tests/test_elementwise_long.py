"""Every elementwise row on long 1-D launches, GPU devices against the CPU.

From 65536 elements (ops_elementwise.cpp's kManyElements) a contiguous launch runs
BM_EW_PER_THREAD elements per thread (shaders/elementwise.h); the op x layout harness uses small
shapes, one element per thread. Here each elementwise row of the registry runs on a contiguous and
an offset 1-D input of 65539 elements (not a multiple of 4: the last thread's pass is partial) on
every non-cpu device and must equal the CPU's result.
"""

import numpy as np
import pytest

import bessemer as bm
from bessemer import _core
from bessemer.testing import assert_close
from harness import TOL, dtypes_on, make_input
from op_cases import CASES

GPU = [str(d) for d in bm.available_devices() if d.type != "cpu"]
ELEMENTWISE = {r["name"] for r in _core.op_table() if r["shape_rule"] == "elementwise"}
N = 65539
# copy (casts) has its own kernels and tests (test_ops, test_layout)
ROWS = [c for c in CASES if c.name in ELEMENTWISE - {"copy"} and c.shapes is None and len(c.shape) >= 1]


def _dtype(case, device):
    have = dtypes_on(device, case.dtypes)
    return bm.float32 if bm.float32 in have else have[0]


def test_every_elementwise_row_is_here():
    assert {c.name for c in ROWS} == ELEMENTWISE - {"copy"}, "an elementwise row without a long-launch test"


@pytest.mark.parametrize("device", GPU)
@pytest.mark.parametrize("layout", ["contiguous", "offset"])
@pytest.mark.parametrize("case", ROWS, ids=lambda c: c.id)
def test_long_launch_equals_cpu(case, layout, device):
    dtype = _dtype(case, device)
    rng = np.random.default_rng(7)
    ins = [make_input((N,), dtype, device, layout, rng, case.domain)[0] for _ in range(case.nin)]
    _core._set_kernel_log(device, True)
    try:
        _core._take_kernel_log(device)
        ours = case.ours(*ins)
        launched = _core._take_kernel_log(device)
    finally:
        _core._set_kernel_log(device, False)
    want = case.ours(*[t.to("cpu") for t in ins])
    assert ours.shape == want.shape and ours.dtype == want.dtype
    assert str(ours.device) == device
    rtol, atol = case.tol if case.tol else TOL[want.dtype]
    assert_close(ours.to("cpu"), want, rtol, atol)
    assert launched, "no kernel ran"
