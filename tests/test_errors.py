"""Bad input gets a clear Python exception naming the op, and leaves every tensor and device usable.

Each case runs on every device; after the error the inputs still hold their values and the device
still computes correctly."""

import numpy as np
import pytest

import bessemer as bm
from harness import DEVICES

CASES = [
    # (what, fn(x, y) with x: (2, 3) float32, y: (4,) float32, exception, message regex)
    ("broadcast mismatch", lambda x, y: x + y, ValueError, r"\[add\] shapes \(2, 3\) and \(4,\) cannot be broadcast"),
    ("bad dim", lambda x, y: x.sum(dim=2), IndexError, r"\[sum\] dim 2 is out of range for a tensor with 2 dims"),
    ("bad dim softmax", lambda x, y: bm.softmax(x, -3), IndexError, r"\[softmax\] dim -3 is out of range"),
    ("repeated dim", lambda x, y: x.sum(dim=(0, -2)), ValueError, r"\[sum\] dim -2 appears more than once"),
    ("reshape size", lambda x, y: x.reshape(4, 2), ValueError, r"\[reshape\] shape \(4, 2\) is invalid for input of "
                                                                  r"size 6"),
    ("negative size", lambda x, y: x.reshape(-2, 3), ValueError, r"\[reshape\] invalid size -2"),
    ("negative factory size", lambda x, y: bm.zeros(2, -1, device=x.device), ValueError, r"negative dimension -1"),
    ("index out of range", lambda x, y: x[2], IndexError, r"\[index\] index 2 is out of bounds for dimension 0 "
                                                          r"with size 2"),
    ("unsupported dtype", lambda x, y: x.to(bm.int32).mean(), bm.UnsupportedError,
     r"\[mean\] expected a floating point input, got int32"),
    ("bool subtraction", lambda x, y: (x > 0) - (x > 1), bm.UnsupportedError, r"\[sub\] dtype bool is not supported"),
    ("too large", lambda x, y: bm.empty(2**45, 2**20, device=x.device), MemoryError,
     r"\[empty\] shape \(35184372088832, 1048576\) is too large"),
    ("view of a transpose", lambda x, y: x.T.view(6), ValueError, r"\[view\].*use \.reshape"),
    ("matmul shapes", lambda x, y: x @ x, ValueError, r"\[matmul\] shapes \(2, 3\) and \(2, 3\) cannot be multiplied"),
    ("where condition", lambda x, y: bm.where(x, x, x), TypeError, r"\[where\] condition must be a bool tensor"),
    ("expand", lambda x, y: x.expand(3, 3), ValueError, r"\[expand\] cannot expand shape \(2, 3\) to \(3, 3\)"),
    ("cat shapes", lambda x, y: bm.cat([x, y]), ValueError, r"\[cat\] sizes of tensors must match"),
    ("item", lambda x, y: x.item(), ValueError, r"\[item\] a tensor with 6 elements"),
    ("integer power", lambda x, y: x.to(bm.int64) ** -1, ValueError, r"\[pow\] integers to negative integer powers"),
    ("empty max", lambda x, y: bm.zeros(0, device=x.device).amax(), ValueError,
     r"\[amax\] cannot reduce over a dimension of size zero"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("what,fn,exc,msg", CASES, ids=[c[0] for c in CASES])
def test_error_is_clear_and_nothing_is_corrupted(device, what, fn, exc, msg):
    xa = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    ya = np.ones(4, dtype=np.float32)
    x, y = bm.tensor(xa, device=device), bm.tensor(ya, device=device)
    with pytest.raises(exc, match=msg):
        fn(x, y)
    np.testing.assert_array_equal(x.numpy(), xa)
    np.testing.assert_array_equal(y.numpy(), ya)
    np.testing.assert_array_equal((x * 2 + 1).sum(dim=0).numpy(), (xa * 2 + 1).sum(axis=0))
