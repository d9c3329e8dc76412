"""Property tests: ops on random shapes and random strided views (transposes, steps, offsets,
broadcasts) agree with NumPy on every device."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bessemer as bm
from bessemer.testing import assert_close
from harness import DEVICES


@st.composite
def strided_pair(draw, min_dims=0, max_dims=4):
    """A numpy array and the same values as a bessemer view built by random view ops."""
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=min_dims, max_size=max_dims)))
    step = tuple(draw(st.integers(1, 3)) for _ in shape)
    start = tuple(draw(st.integers(0, 2)) for _ in shape)
    base_shape = tuple(s0 + (s - 1) * k + 1 for s, k, s0 in zip(shape, step, start, strict=True))
    perm = draw(st.permutations(range(len(shape))))
    seed = draw(st.integers(0, 2**31))
    base = np.random.default_rng(seed).standard_normal(base_shape).astype(np.float32)
    idx = tuple(slice(s0, None, k) for s0, k in zip(start, step, strict=True))
    a = base[idx][tuple(slice(0, s) for s in shape)].transpose(perm)
    return base, idx, shape, perm, a


def as_bessemer(base, idx, shape, perm, device):
    t = bm.tensor(base, device=device)[idx][tuple(slice(0, s) for s in shape)]
    return t.permute(*perm) if perm else t


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=40, deadline=None)
@given(p=strided_pair(), q_seed=st.integers(0, 2**31), op=st.sampled_from(["add", "mul", "sub", "maximum", "div"]))
def test_binary_on_random_views(device, p, q_seed, op):
    base, idx, shape, perm, a = p
    t = as_bessemer(base, idx, shape, perm, device)
    # the other operand broadcasts along a random subset of dims
    rng = np.random.default_rng(q_seed)
    bshape = tuple(1 if rng.random() < 0.5 else s for s in a.shape)
    b = rng.standard_normal(bshape).astype(np.float32) + (3 if op == "div" else 0)
    u = bm.tensor(b, device=device)
    ref = {"add": np.add, "mul": np.multiply, "sub": np.subtract, "maximum": np.maximum, "div": np.divide}[op]
    ours = {"add": lambda x, y: x + y, "mul": lambda x, y: x * y, "sub": lambda x, y: x - y,
            "maximum": bm.maximum, "div": lambda x, y: x / y}[op]
    assert_close(ours(t, u), ref(a, b), rtol=1e-6, atol=1e-6)
    assert_close(ours(u, t), ref(b, a), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=40, deadline=None)
@given(p=strided_pair(min_dims=0), fn=st.sampled_from(["exp", "neg", "abs", "tanh", "relu", "to_half", "contiguous"]))
def test_unary_on_random_views(device, p, fn):
    base, idx, shape, perm, a = p
    t = as_bessemer(base, idx, shape, perm, device)
    ours = {"exp": bm.exp, "neg": bm.neg, "abs": bm.abs, "tanh": bm.tanh, "relu": bm.relu,
            "to_half": lambda x: x.to(bm.float16), "contiguous": lambda x: x.contiguous()}[fn]
    ref = {"exp": np.exp, "neg": np.negative, "abs": np.abs, "tanh": np.tanh, "relu": lambda x: np.maximum(x, 0),
           "to_half": lambda x: x.astype(np.float16), "contiguous": np.array}[fn]
    r = ours(t)
    assert_close(r, ref(a), rtol=1e-3 if fn == "to_half" else 2e-6, atol=1e-6, check_dtype=False)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 9), k=st.integers(1, 9), n=st.integers(1, 9), batch=st.lists(st.integers(1, 3), max_size=2),
       ta=st.booleans(), tb=st.booleans(), seed=st.integers(0, 2**31))
def test_matmul_on_random_layouts(device, m, k, n, batch, ta, tb, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    ta_ = bm.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device=device).transpose(-1, -2) if ta \
        else bm.tensor(a, device=device)
    tb_ = bm.tensor(np.ascontiguousarray(b.T), device=device).T if tb else bm.tensor(b, device=device)
    assert_close(ta_ @ tb_, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=40, deadline=None)
@given(p=strided_pair(min_dims=1), data=st.data(),
       op=st.sampled_from(["sum", "mean", "var", "amax", "amin", "argmax", "softmax"]), keepdim=st.booleans())
def test_reductions_on_random_views_and_dims(device, p, data, op, keepdim):
    base, idx, shape, perm, a = p
    t = as_bessemer(base, idx, shape, perm, device)
    nd = a.ndim
    if op in ("argmax", "softmax"):
        dims = data.draw(st.integers(-nd, nd - 1))
        axis = dims
    else:
        picked = data.draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd))
        dims = [d - nd if data.draw(st.booleans()) else d for d in picked] or None
        axis = tuple(d % nd for d in dims) if dims else None
    a64 = a.astype(np.float64)
    if op == "softmax":
        e = np.exp(a64 - a64.max(axis=axis, keepdims=True))
        assert_close(bm.softmax(t, dims), e / e.sum(axis=axis, keepdims=True), rtol=1e-5, atol=1e-6)
        return
    if op == "argmax":
        assert_close(t.argmax(dim=dims, keepdim=keepdim), np.argmax(a64, axis=axis, keepdims=keepdim),
                     check_dtype=False)
        return
    n = a64.size if axis is None else int(np.prod([a64.shape[d] for d in axis]))
    if op == "var" and n < 2:
        return  # N - correction <= 0 is covered by the row tests (inf/nan like torch)
    ours = {"sum": lambda: t.sum(dim=dims, keepdim=keepdim), "mean": lambda: t.mean(dim=dims, keepdim=keepdim),
            "var": lambda: t.var(dim=dims, keepdim=keepdim), "amax": lambda: t.amax(dim=dims or (), keepdim=keepdim),
            "amin": lambda: t.amin(dim=dims or (), keepdim=keepdim)}[op]()
    ref = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min,
           "var": lambda x, axis, keepdims: np.var(x, axis=axis, keepdims=keepdims, ddof=1)}[op](
        a64, axis=axis, keepdims=keepdim)
    assert_close(ours, ref, rtol=1e-5, atol=1e-5)
