"""Result memory layouts follow torch: elementwise results keep their input's memory order,
contiguous() is always contiguous; and clamp promotes with its bounds."""

import numpy as np
import pytest
import torch

import bessemer as bm
from harness import DEVICES


def both(shape, perm, device="cpu"):
    """The same permuted view in bessemer (built on `device`, then permuted) and in torch."""
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return bm.tensor(a, device=device).permute(*perm), torch.tensor(a).permute(*perm)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,perm", [((4, 3), (1, 0)), ((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (0, 2, 1)),
                                        ((5, 1, 3), (2, 1, 0))])
@pytest.mark.parametrize("op", [lambda x: x + 1, lambda x: x.exp(), lambda x: x * x, lambda x: -x,
                                lambda x: x.to(bm.float16) if isinstance(x, bm.Tensor) else x.to(torch.float16),
                                lambda x: x.clone()])
def test_elementwise_results_keep_the_input_memory_order(device, shape, perm, op):
    b, t = both(shape, perm, device)
    r, rt = op(b), op(t)
    assert r.stride() == rt.stride(), f"{r.stride()} vs torch {rt.stride()}"
    np.testing.assert_allclose(r.to(bm.float32).numpy(), rt.float().numpy(), rtol=1e-3)
    c = r.contiguous()
    assert c.is_contiguous() and c.stride() == rt.contiguous().stride()


@pytest.mark.parametrize("device", DEVICES)
def test_broadcast_binary_takes_the_full_size_operand_order(device):
    b, t = both((6, 5), (1, 0), device)
    r = bm.tensor(np.ones(6, dtype=np.float32), device=device)
    assert (b + r).stride() == (t + torch.ones(6)).stride()
    np.testing.assert_array_equal((b + r).numpy(), b.numpy() + 1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("lo,hi", [(1.5, None), (None, 2.5), (0, 2), (True, None)])
def test_clamp_promotes_with_its_bounds_like_torch(lo, hi, device):
    x = [1, 2, 3]
    r = bm.clamp(bm.tensor(x, device=device), lo, hi)
    rt = torch.clamp(torch.tensor(x), lo, hi)
    assert r.dtype.name == str(rt.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(r.numpy(), rt.numpy())
