"""embedding, nll_loss / cross_entropy and linear against torch CPU on every device, on strided
layouts, with their errors; the Embedding, CrossEntropyLoss and NLLLoss layers. Dropout is in
test_nn_dropout.py."""

import numpy as np
import pytest
import torch

import bessemer as bm
from bessemer import nn
from bessemer.nn import functional as F
from harness import DEVICES

GPUS = [d for d in DEVICES if d != "cpu"]
TORCH = {bm.float32: torch.float32, bm.float16: torch.float16, bm.bfloat16: torch.bfloat16,
         bm.int32: torch.int32, bm.int64: torch.int64, bm.bool: torch.bool}


def view_of(arr: np.ndarray, layout: str, device: str, dtype=None):
    """A bessemer view holding arr's values in `layout` (the view is built on the device)."""
    arr = np.asarray(arr)
    if layout == "contiguous" or arr.ndim == 0:
        return bm.tensor(arr, dtype=dtype, device=device)
    if layout == "transposed":
        if arr.ndim == 1:  # a column of a transposed matrix
            t = bm.tensor(np.stack([arr, arr, arr]), dtype=dtype, device=device)
            return t.T[:, 1]
        t = bm.tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2)), dtype=dtype, device=device)
        return t.transpose(-1, -2)
    if layout == "sliced":
        big = np.zeros(tuple(2 * s + 1 for s in arr.shape), arr.dtype)
        sl = tuple(slice(1, None, 2) for _ in arr.shape)
        big[sl] = arr
        return bm.tensor(big, dtype=dtype, device=device)[sl]
    if layout == "offset":
        flat = np.concatenate([np.zeros(3, arr.dtype), arr.ravel()])
        return bm.tensor(flat, dtype=dtype, device=device)[3:].reshape(arr.shape)
    raise ValueError(layout)


def as_np(t) -> np.ndarray:
    return t.to(bm.float32).numpy() if t.dtype in (bm.float16, bm.bfloat16) else t.numpy()


# ---------------------------------------------------------------- embedding

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("idx_layout", ["contiguous", "transposed", "sliced", "offset"])
@pytest.mark.parametrize("w_layout", ["contiguous", "transposed", "sliced", "offset"])
@pytest.mark.parametrize("idx_dtype", [bm.int32, bm.int64])
def test_embedding_matches_torch_on_layouts(device, idx_layout, w_layout, idx_dtype):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((7, 5)).astype(np.float32)
    idx = rng.integers(0, 7, (3, 4))
    got = F.embedding(view_of(idx, idx_layout, device, idx_dtype), view_of(w, w_layout, device))
    want = torch.nn.functional.embedding(torch.tensor(idx), torch.tensor(w))
    assert got.shape == (3, 4, 5) and got.device is bm.device(device)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [bm.float32, bm.float16, bm.bfloat16, bm.int32, bm.int64, bm.bool])
@pytest.mark.parametrize("idx_shape", [(), (6,), (2, 3, 2), (0,), (2, 0)])
def test_embedding_dtypes_and_index_shapes(device, dtype, idx_shape):
    rng = np.random.default_rng(1)
    w = torch.tensor(rng.standard_normal((6, 3)) * 4).to(TORCH[dtype])
    idx = rng.integers(0, 6, idx_shape)
    bw = bm.tensor(w.to(torch.float32).numpy(), dtype=dtype, device=device)
    got = F.embedding(bm.tensor(idx, device=device), bw)
    want = torch.nn.functional.embedding(torch.tensor(idx), w)
    assert got.shape == tuple(want.shape) and got.dtype is dtype
    np.testing.assert_array_equal(as_np(got), want.to(torch.float32).numpy() if dtype != bm.bool else want.numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_embedding_broadcast_and_many_dim_indices(device):
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    bw = bm.tensor(w, device=device)
    col = bm.tensor([[3], [1]], device=device).expand(2, 5)  # zero strides
    np.testing.assert_array_equal(F.embedding(col, bw).numpy(), w[np.array([[3] * 5, [1] * 5])])
    # 9 dims that merge nowhere: the Metal launch is split along the outer dims
    idx = np.random.default_rng(2).integers(0, 4, (2,) * 9)
    perm = list(range(9))[::-1]
    v = bm.tensor(idx, device=device).permute(perm)
    np.testing.assert_array_equal(F.embedding(v, bw).numpy(), w[idx.transpose(perm)])


@pytest.mark.parametrize("device", DEVICES)
def test_embedding_bad_indices_raise_before_anything_changes(device):
    w = bm.tensor(np.arange(10, dtype=np.float32).reshape(5, 2), device=device)
    before = w.numpy().copy()
    for bad, shown in [([0, 5, 1], "5"), ([[1, 2], [-1, 0]], "-1"), (7, "7")]:
        with pytest.raises(IndexError, match=rf"\[embedding\] index {shown} is out of range .* 5 rows"):
            F.embedding(bm.tensor(bad, device=device), w)
    # only the view's elements count: a bad value outside a sliced view is not an error
    storage = bm.tensor([99, 1, 99, 4, 99], device=device)
    np.testing.assert_array_equal(F.embedding(storage[1::2], w).numpy(), before[[1, 4]])
    with pytest.raises(IndexError, match=r"index 99"):
        F.embedding(storage[0::2], w)
    np.testing.assert_array_equal(w.numpy(), before)
    np.testing.assert_array_equal((w * 2).numpy(), before * 2)  # the device keeps working


@pytest.mark.parametrize("device", DEVICES)
def test_embedding_argument_errors(device):
    w = bm.ones(5, 2, device=device)
    with pytest.raises(TypeError, match=r"\[embedding\] expected input of int32 or int64 indices, got float32"):
        F.embedding(bm.tensor([1.0], device=device), w)
    with pytest.raises(ValueError, match=r"\[embedding\] weight must be 2-D"):
        F.embedding(bm.tensor([1], device=device), bm.ones(5, device=device))
    with pytest.raises(ValueError, match=r"\[embedding\] padding_idx 5 must be within num_embeddings"):
        F.embedding(bm.tensor([1], device=device), w, padding_idx=5)
    assert F.embedding(bm.tensor([1], device=device), w, padding_idx=-5).shape == (1, 2)
    with pytest.raises(bm.UnsupportedError, match=r"\[embedding\] max_norm"):
        F.embedding(bm.tensor([1], device=device), w, max_norm=1.0)


@pytest.mark.parametrize("dev", GPUS)
def test_embedding_device_mismatch_comes_first(dev):
    # wrong index dtype and out-of-range values too: the device check wins
    with pytest.raises(bm.DeviceMismatchError, match=rf"\[embedding\] inputs are on different devices: input on cpu, "
                                                     rf"weight on {dev}"):
        F.embedding(bm.tensor([99.0]), bm.ones(5, 2, device=dev))
    with pytest.raises(bm.DeviceMismatchError, match=r"\[embedding\]"):
        F.embedding(bm.zeros(0, dtype=bm.int64, device=dev), bm.ones(0, 2))


@pytest.mark.parametrize("device", DEVICES)
def test_embedding_layer(device):
    bm.manual_seed(3)
    e = nn.Embedding(1000, 64, padding_idx=-2, device=device)
    w = e.weight.numpy()
    assert e.padding_idx == 998 and (w[998] == 0).all() and e.weight.device is bm.device(device)
    rest = np.delete(w, 998, axis=0)
    assert abs(rest.mean()) < 0.02 and abs(rest.std() - 1) < 0.02  # normal_(0, 1), as torch
    assert list(e.state_dict()) == ["weight"] and repr(e) == "Embedding(1000, 64, padding_idx=998)"
    e2 = nn.Embedding(1000, 64, device=device)
    assert not np.array_equal(e2.weight.numpy(), w)  # the generator moved on
    idx = np.array([[1, 998], [5, 0]])
    t = torch.nn.Embedding(1000, 64, padding_idx=998)
    t.load_state_dict({"weight": torch.tensor(w)})
    np.testing.assert_array_equal(e(bm.tensor(idx, device=device)).numpy(), t(torch.tensor(idx)).detach().numpy())
    h = nn.Embedding(4, 2, dtype=bm.float16, device=device)
    assert h.weight.dtype is bm.float16
    p = nn.Embedding.from_pretrained(bm.tensor([[1.0, 2.0], [3.0, 4.0]], device=device))
    assert p(bm.tensor([1, 1], device=device)).tolist() == [[3.0, 4.0], [3.0, 4.0]]
    with pytest.raises(ValueError, match=r"\[Embedding\] padding_idx 4 must be within num_embeddings"):
        nn.Embedding(4, 2, padding_idx=4)


# ---------------------------------------------------------------- nll_loss / cross_entropy

SHAPES = [(4, 5), (5,), (3, 4, 6), (2, 3, 2, 2)]


def _problem(shape, kind, ignore, seed=0):
    """(input, target, weight) numpy data; class dim 1 (0 for a single sample)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 2
    cdim = 0 if len(shape) == 1 else 1
    c = shape[cdim]
    if kind == "prob":
        p = rng.random(shape)
        return x, p / p.sum(axis=cdim, keepdims=True), rng.random(c) + 0.5
    tshape = shape[:cdim] + shape[cdim + 1:]
    t = rng.integers(0, c, tshape)
    if ignore is not None and t.size > 1:
        t.reshape(-1)[::3] = ignore
    return x, t, rng.random(c) + 0.5


def _torch_loss(fn, x, t, w, **kw):
    tt = torch.tensor(t) if t.dtype != np.float64 else torch.tensor(t, dtype=torch.float64)
    return fn(torch.tensor(x), tt, None if w is None else torch.tensor(w), **kw).numpy()


CE_PARAMS = [(shape, kind, red, weighted, ignore, ls)
             for shape in SHAPES for kind in ("index", "prob") for red in ("none", "mean", "sum")
             for weighted in (False, True) for ignore in ((None, 2, -100) if kind == "index" else (None,))
             for ls in (0.0, 0.15)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,kind,reduction,weighted,ignore,ls", CE_PARAMS)
def test_cross_entropy_matches_torch(device, shape, kind, reduction, weighted, ignore, ls):
    x, t, w = _problem(shape, kind, ignore)
    w = w if weighted else None
    kw = dict(reduction=reduction, label_smoothing=ls, ignore_index=-100 if ignore is None else ignore)
    want = _torch_loss(torch.nn.functional.cross_entropy, x, t, w, **kw)
    layout = "transposed" if len(shape) > 1 and sum(shape) % 2 else "sliced"
    got = F.cross_entropy(view_of(x, layout, device, bm.float32), bm.tensor(t, device=device, dtype=None
                          if kind == "index" else bm.float32),
                          None if w is None else bm.tensor(w, dtype=bm.float32, device=device), **kw)
    assert got.shape == want.shape and got.dtype is bm.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-5, atol=2e-6)
    if kind == "index" and ls == 0:
        nll = F.nll_loss(bm.log_softmax(bm.tensor(x, dtype=bm.float32, device=device), 0 if len(shape) == 1 else 1),
                         bm.tensor(t, device=device),
                         None if w is None else bm.tensor(w, dtype=bm.float32, device=device),
                         ignore_index=kw["ignore_index"], reduction=reduction)
        np.testing.assert_allclose(nll.numpy(), want, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,tol", [(bm.float16, 4e-3), (bm.bfloat16, 3e-2)])
@pytest.mark.parametrize("kind", ["index", "prob"])
def test_cross_entropy_half_types(device, dtype, tol, kind):
    x, t, w = _problem((6, 5, 3), kind, 1 if kind == "index" else None)
    xr = bm.tensor(x, dtype=dtype).to(bm.float32).numpy().astype(np.float64)  # the values the half input holds
    for red in ("none", "mean", "sum"):
        kw = dict(reduction=red, label_smoothing=0.1, ignore_index=1 if kind == "index" else -100)
        want = _torch_loss(torch.nn.functional.cross_entropy, xr, t, w, **kw)
        tt = bm.tensor(t, device=device, dtype=None if kind == "index" else dtype)
        got = F.cross_entropy(bm.tensor(x, dtype=dtype, device=device), tt, bm.tensor(w, dtype=dtype, device=device),
                              **kw)
        assert got.dtype is dtype
        np.testing.assert_allclose(as_np(got), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
def test_nll_loss_edge_cases(device):
    x = bm.tensor(np.log(np.full((3, 4), 0.25)), dtype=bm.float32, device=device)
    every = bm.tensor([-100, -100, -100], device=device)
    assert np.isnan(F.nll_loss(x, every).item())  # mean over no targets: 0 / 0, as torch
    assert F.nll_loss(x, every, reduction="sum").item() == 0
    assert F.nll_loss(x, every, reduction="none").tolist() == [0, 0, 0]
    empty = F.cross_entropy(bm.zeros(0, 4, device=device), bm.zeros(0, dtype=bm.int64, device=device))
    assert np.isnan(empty.item())
    assert F.cross_entropy(bm.zeros(0, 4, device=device), bm.zeros(0, 4, device=device), reduction="sum").item() == 0
    i32 = F.cross_entropy(x, bm.tensor([0, 1, 3], dtype=bm.int32, device=device))
    assert abs(i32.item() - np.log(4)) < 1e-6
    # torch's legacy size_average / reduce arguments pick the reduction
    t = bm.tensor([0, 1, 3], device=device)
    assert F.nll_loss(x, t, size_average=False).item() == pytest.approx(3 * np.log(4), rel=1e-6)
    assert F.nll_loss(x, t, reduce=False).shape == (3,)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
def test_loss_errors(device, fn):
    f = getattr(F, fn)
    x = bm.zeros(4, 5, device=device)
    t = bm.tensor([0, 1, 2, 3], device=device)
    before = x.numpy().copy()
    for bad, shown in [([0, 5, 1, 1], "5"), ([0, -3, 1, 1], "-3")]:
        with pytest.raises(IndexError, match=rf"\[{fn}\] target {shown} is out of bounds for 5 classes"):
            f(x, bm.tensor(bad, device=device))
    with pytest.raises(IndexError, match=rf"\[{fn}\] target -100"):
        f(x, bm.tensor([0, -100, 1, 1], device=device), ignore_index=0)
    with pytest.raises(ValueError, match=rf"\[{fn}\] expected a target of shape \(4,\) for input of shape \(4, 5\), "
                                         r"got \(3,\)"):
        f(x, bm.tensor([0, 1, 2], device=device))
    with pytest.raises(ValueError, match=rf"\[{fn}\] expected a target of shape \(4, 3\)"):
        f(bm.zeros(4, 5, 3, device=device), bm.zeros(4, 2, dtype=bm.int64, device=device))
    with pytest.raises(ValueError, match=rf"\[{fn}\] 'avg' is not a valid value for reduction"):
        f(x, t, reduction="avg")
    with pytest.raises(ValueError, match=rf"\[{fn}\] weight must have one value per class"):
        f(x, t, weight=bm.ones(4, device=device))
    with pytest.raises(ValueError, match=rf"\[{fn}\] expected an input with at least 1 dim"):
        f(bm.zeros((), device=device), bm.tensor(0, device=device))
    with pytest.raises(bm.UnsupportedError, match=rf"\[{fn}\] expected a floating point input, got int64"):
        f(bm.zeros(4, 5, dtype=bm.int64, device=device), t)
    with pytest.raises(TypeError, match=rf"\[{fn}\] expected a target of int64 class indices"):
        f(x, bm.zeros(4, device=device))
    np.testing.assert_array_equal(x.numpy(), before)


@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_probability_target_errors(device):
    x = bm.zeros(4, 5, device=device)
    with pytest.raises(TypeError, match=r"\[cross_entropy\] expected a floating point target for class probabilities"):
        F.cross_entropy(x, bm.zeros(4, 5, dtype=bm.int64, device=device))
    with pytest.raises(ValueError, match=r"\[cross_entropy\] ignore_index is not supported"):
        F.cross_entropy(x, bm.zeros(4, 5, device=device), ignore_index=0)
    with pytest.raises(ValueError, match=r"\[cross_entropy\] label_smoothing must be between 0.0 and 1.0, got 1.5"):
        F.cross_entropy(x, bm.tensor([0, 1, 2, 3], device=device), label_smoothing=1.5)


@pytest.mark.parametrize("dev", GPUS)
@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
def test_loss_device_mismatch_comes_first(dev, fn):
    f = getattr(F, fn)
    # bad shapes, a bad dtype and out-of-range targets too: the device check wins
    with pytest.raises(bm.DeviceMismatchError, match=rf"\[{fn}\] inputs are on different devices: input on cpu, "
                                                     rf"target on {dev}"):
        f(bm.zeros(4, 5, dtype=bm.int32), bm.tensor([9.0, 9.0], device=dev))
    with pytest.raises(bm.DeviceMismatchError, match=rf"input on {dev}, weight on cpu"):
        f(bm.zeros(4, 5, device=dev), bm.tensor([0, 1, 2, 3], device=dev), weight=bm.ones(5))
    with pytest.raises(bm.DeviceMismatchError, match=rf"\[{fn}\]"):
        f(bm.zeros(0, 5), bm.zeros(0, dtype=bm.int64, device=dev))


@pytest.mark.parametrize("device", DEVICES)
def test_loss_layers(device):
    x, t, w = _problem((6, 4), "index", 3)
    ce = nn.CrossEntropyLoss(weight=bm.tensor(w, dtype=bm.float32), ignore_index=3, label_smoothing=0.05).to(device)
    assert list(ce.state_dict()) == ["weight"] and ce.weight.device is bm.device(device)
    want = torch.nn.CrossEntropyLoss(weight=torch.tensor(w), ignore_index=3, label_smoothing=0.05)(
        torch.tensor(x), torch.tensor(t)).item()
    assert ce(bm.tensor(x, dtype=bm.float32, device=device), bm.tensor(t, device=device)).item() == \
        pytest.approx(want, rel=1e-5)
    nll = nn.NLLLoss(reduction="sum")
    assert list(nll.state_dict()) == [] and nll.reduction == "sum"
    logp = torch.log_softmax(torch.tensor(x), 1)
    want = torch.nn.NLLLoss(reduction="sum", ignore_index=-100)(logp, torch.tensor(np.where(t == 3, 0, t))).item()
    got = nll(bm.tensor(logp.numpy(), dtype=bm.float32, device=device),
              bm.tensor(np.where(t == 3, 0, t), device=device))
    assert got.item() == pytest.approx(want, rel=1e-5)
    assert nn.CrossEntropyLoss(size_average=False).reduction == "sum"


# ---------------------------------------------------------------- linear

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("in_shape", [(5,), (1, 5), (3, 5), (2, 3, 5), (1, 1, 5), (2, 1, 3, 5), (0, 5)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("bias", [False, True])
def test_linear_matches_torch(device, in_shape, layout, bias):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(in_shape).astype(np.float32)
    w = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32) if bias else None
    got = F.linear(view_of(x, layout, device), view_of(w, layout, device),
                   None if b is None else view_of(b, layout, device))
    want = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), None if b is None else torch.tensor(b))
    assert got.shape == tuple(want.shape) and got.device is bm.device(device)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_linear_vector_weight_half_and_errors(device):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    w = rng.standard_normal(5).astype(np.float32)
    got = F.linear(bm.tensor(x, device=device), bm.tensor(w, device=device), bm.tensor(0.5, device=device))
    # (torch's 2-D input path rejects a bias with a 1-D weight; its other paths add it like this)
    want = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w)) + 0.5
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    wm = rng.standard_normal((4, 5)).astype(np.float32)
    h = F.linear(bm.tensor(x, dtype=bm.float16, device=device), bm.tensor(wm, dtype=bm.float16, device=device),
                 bm.ones(4, dtype=bm.float16, device=device))
    assert h.dtype is bm.float16
    np.testing.assert_allclose(as_np(h), x @ wm.T + 1, rtol=1e-2, atol=1e-2)
    with pytest.raises(ValueError, match=r"\[linear\] input of shape \(3, 5\) and weight of shape \(4, 6\) cannot"):
        F.linear(bm.tensor(x, device=device), bm.ones(4, 6, device=device))
    with pytest.raises(ValueError, match=r"\[linear\] bias of shape \(3,\) does not broadcast"):
        F.linear(bm.tensor(x, device=device), bm.ones(4, 5, device=device), bm.ones(3, device=device))
    with pytest.raises(ValueError, match=r"\[linear\] expected an input with at least 1 dim and a 1-D or 2-D weight"):
        F.linear(bm.tensor(x, device=device), bm.ones(2, 4, 5, device=device))


@pytest.mark.parametrize("dev", GPUS)
def test_linear_device_mismatch_names_linear(dev):
    with pytest.raises(bm.DeviceMismatchError, match=rf"\[linear\] inputs are on different devices: input on {dev}, "
                                                     r"bias on cpu"):
        F.linear(bm.ones(2, 3, device=dev), bm.ones(4, 7, dtype=bm.int32, device=dev), bm.ones(9))
    with pytest.raises(bm.DeviceMismatchError, match=r"\[linear\] .* weight on cpu"):
        F.linear(bm.ones(0, 3, device=dev), bm.ones(4, 3))
    m = nn.Linear(3, 4)
    with pytest.raises(bm.DeviceMismatchError, match=r"\[linear\]"):
        m(bm.ones(2, 3, device=dev))
    assert m.to(dev)(bm.ones(2, 3, device=dev)).shape == (2, 4)
