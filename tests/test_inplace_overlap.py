"""In-place writes whose source overlaps the destination without being the same view.

x[1:].copy_(x[:-1]) reads memory that the same kernel writes: on a GPU its threads race, and a
kernel run in order gives an order-dependent answer (the simulator's race detector found this in the
copy and add kernels). bessemer reads such a source from a copy, so the answer is NumPy's, whose
in-place ufuncs buffer overlapping operands, on every device and in any lane order."""

import numpy as np
import pytest

import bessemer as bm
from bessemer import metal_sim

DEVICES = [str(d) for d in bm.available_devices()]

# (name, write(x) in bessemer, the same write in NumPy)
CASES = [
    ("copy shift right", lambda x: x[1:].copy_(x[:-1]), lambda a: np.copyto(a[1:], a[:-1])),
    ("copy shift left", lambda x: x[:-1].copy_(x[1:]), lambda a: np.copyto(a[:-1], a[1:])),
    ("copy transposed", lambda x: x[:9].view(3, 3).copy_(x[:9].view(3, 3).transpose(0, 1)),
     lambda a: np.copyto(a[:9].reshape(3, 3), a[:9].reshape(3, 3).T)),
    ("add_ shifted", lambda x: x[:-1].add_(x[1:]), lambda a: np.add(a[:-1], a[1:], out=a[:-1])),
    ("mul_ shifted", lambda x: x[2:].mul_(x[:-2]), lambda a: np.multiply(a[2:], a[:-2], out=a[2:])),
    ("sub_ step-sliced", lambda x: x[::2].sub_(x[1::2]), lambda a: np.subtract(a[::2], a[1::2], out=a[::2])),
    ("setitem shifted", lambda x: x.__setitem__(slice(1, None), x[:-1]),
     lambda a: a.__setitem__(slice(1, None), a[:-1])),
    ("add_ itself", lambda x: x.add_(x), lambda a: np.add(a, a, out=a)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,ours,ref", CASES, ids=[c[0] for c in CASES])
def test_overlapping_in_place_write_matches_numpy(device, name, ours, ref):
    a = np.arange(1, 11, dtype=np.float32)
    x = bm.tensor(a, device=device)
    ours(x)
    ref(a)
    np.testing.assert_array_equal(x.numpy(), a)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_overlapping_copy_is_lane_order_independent_on_the_simulator(seed):
    a = np.arange(64, dtype=np.float32)
    x = bm.tensor(a, device="metal-sim")
    with metal_sim.shuffled(seed):
        x[1:].copy_(x[:-1])
        bm.synchronize()
    np.testing.assert_array_equal(x.numpy(), np.concatenate([[0.0], a[:-1]]).astype(np.float32))


def test_overlap_rule_control():
    """The oracle differs from what an in-order kernel without the copy gives, so the tests above can fail."""
    a = np.arange(1, 11, dtype=np.float32)
    in_order = a.copy()
    for i in range(1, 10):  # what a kernel writing x[i] = x[i-1] in increasing i leaves behind
        in_order[i] = in_order[i - 1]
    b = a.copy()
    np.copyto(b[1:], b[:-1])
    assert not np.array_equal(in_order, b)
