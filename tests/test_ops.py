"""Every row of op_cases.CASES x device x layout x dtype, against NumPy."""

import numpy as np
import pytest

import bessemer as bm
from harness import DEVICES, LAYOUTS, TOL, check_op, dtypes_on, make_input
from op_cases import CASES, expected_dtype

PARAMS = [
    pytest.param(case, device, layout, dtype, id=f"{case.id}-{device}-{layout}-{dtype.name}")
    for case in CASES
    for device in DEVICES
    for layout in LAYOUTS
    for dtype in dtypes_on(device, case.dtypes)
]


@pytest.mark.parametrize("case,device,layout,dtype", PARAMS)
def test_op(case, device, layout, dtype):
    shapes = case.input_shapes
    if layout in case.errors:  # inputs this op must reject (e.g. 0-d inputs to matmul)
        rng = np.random.default_rng(0)
        inputs = [make_input(s, dtype, device, layout, rng, case.domain)[0] for s in shapes]
        with pytest.raises(case.errors[layout], match=rf"\[{case.name}\]"):
            case.ours(*inputs)
        return
    want = expected_dtype(case, dtype)
    if want not in dtypes_on(device, [want]):  # e.g. a cast to float64 on Metal: a clear error instead
        rng = np.random.default_rng(0)
        inputs = [make_input(s, dtype, device, layout, rng, case.domain)[0] for s in shapes]
        with pytest.raises(bm.UnsupportedError, match=rf"\[{case.name}\] dtype {want.name} is not supported on "
                                                      rf"device {device}"):
            case.ours(*inputs)
        return
    rtol, atol = case.tol if case.tol else TOL[want]
    check_op(shapes, case.reference, case.ours, atol, rtol, dtype=dtype, device=device, layout=layout,
             domain=case.domain, out_dtype=want)
