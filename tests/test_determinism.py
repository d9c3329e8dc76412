"""bm.use_deterministic_algorithms: the API (torch's names and meanings), the same forward pass and
the same training steps twice with identical bits on every device (also in a fresh process), the
dispatcher check that raises or warns for an op without a deterministic kernel (a control marks a
row), and the generated table of docs/determinism.md."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import bessemer as bm
import bessemer.nn.functional as F
from harness import DEVICES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import determinism_table  # noqa: E402


@pytest.fixture(autouse=True)
def _restore_flag():
    yield
    bm.use_deterministic_algorithms(False)


def _bits(t) -> bytes:
    """A tensor's exact bytes (NaN payloads and signed zeros included), with its shape and dtype."""
    a = t.detach().numpy() if isinstance(t, bm.Tensor) else np.asarray(t)
    return repr((a.shape, a.dtype.str)).encode() + np.ascontiguousarray(a).tobytes()


def _digest(tensors) -> str:
    h = hashlib.sha256()
    for t in tensors:
        h.update(_bits(t))
    return h.hexdigest()


# ---- the API ----

def test_flag_api_matches_torch():
    assert bm.are_deterministic_algorithms_enabled() is False
    assert bm.is_deterministic_algorithms_warn_only_enabled() is False
    bm.use_deterministic_algorithms(True)
    assert bm.are_deterministic_algorithms_enabled() is True
    assert bm.is_deterministic_algorithms_warn_only_enabled() is False
    bm.use_deterministic_algorithms(True, warn_only=True)
    assert bm.are_deterministic_algorithms_enabled() and bm.is_deterministic_algorithms_warn_only_enabled()
    bm.use_deterministic_algorithms(False, warn_only=True)
    assert not bm.are_deterministic_algorithms_enabled()
    assert bm.is_deterministic_algorithms_warn_only_enabled()  # as torch: reported whatever the mode
    bm.use_deterministic_algorithms(False)
    assert not bm.is_deterministic_algorithms_warn_only_enabled()
    with pytest.raises(TypeError, match="use_deterministic_algorithms"):
        bm.use_deterministic_algorithms(1)
    with pytest.raises(TypeError, match="warn_only"):
        bm.use_deterministic_algorithms(True, warn_only="yes")


# ---- the same computation twice gives the same bits ----

def _net(device):
    nn = bm.nn
    bm.manual_seed(1234)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1, stride=2), nn.BatchNorm2d(16), nn.GELU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.3), nn.Linear(16, 10),
    ).to(device)


def _batch(device, step=0):
    g = bm.Generator(device).manual_seed(99 + step)
    x = bm.randn(16, 3, 12, 12, generator=g, device=device)
    y = (bm.rand(16, generator=g, device=device) * 10).to(bm.int64)
    return x, y


def _forward(device):
    model = _net(device).train()
    x, _ = _batch(device)
    bm.manual_seed(7)  # the dropout mask's generator
    out = model(x)
    stats = [b for name, b in model.state_dict().items() if "running" in name]
    return [out, *stats]


def _train_steps(device, opt_name, steps=3):
    model = _net(device).train()
    params = list(model.parameters())
    opt = (bm.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-3) if opt_name == "sgd"
           else bm.optim.Adam(params, lr=1e-2, weight_decay=1e-3))
    bm.manual_seed(7)
    for step in range(steps):
        x, y = _batch(device, step)
        loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
    state = [v for s in opt.state.values() for v in s.values() if isinstance(v, bm.Tensor)]
    assert state, "the optimizer kept no state tensors to compare"
    return [loss, *params, *(p.grad for p in params), *state, *model.state_dict().values()]


@pytest.mark.parametrize("device", DEVICES)
def test_forward_twice_identical_bits(device):
    bm.use_deterministic_algorithms(True)
    first, second = _forward(device), _forward(device)
    assert [_bits(t) for t in first] == [_bits(t) for t in second]


@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
@pytest.mark.parametrize("device", DEVICES)
def test_training_steps_twice_identical_bits(device, opt_name):
    bm.use_deterministic_algorithms(True)
    first, second = _train_steps(device, opt_name), _train_steps(device, opt_name)
    assert len(first) == len(second)
    for i, (a, b) in enumerate(zip(first, second)):
        assert _bits(a) == _bits(b), f"tensor {i} differs between two identical training runs"


def test_bit_comparison_sees_one_ulp():
    """Control: the comparison above catches the smallest possible change, and -0.0 vs 0.0."""
    a = bm.tensor([1.0, 2.0, 0.0])
    b = bm.tensor(np.array([1.0, np.nextafter(np.float32(2.0), np.float32(3.0)), 0.0], dtype=np.float32))
    assert _bits(a) != _bits(b)
    assert _bits(a) != _bits(bm.tensor([1.0, 2.0, -0.0]))
    assert _bits(a) == _bits(bm.tensor([1.0, 2.0, 0.0]))


def test_training_steps_identical_in_a_fresh_process():
    """Run after run means across processes too: a child computes the same digests."""
    here = {(d, o): _digest(_train_steps(d, o, steps=2)) for d in DEVICES for o in ("sgd", "adam")}
    code = textwrap.dedent(f"""
        import sys; sys.path[:0] = [{os.path.join(ROOT, 'tests')!r}]
        import test_determinism as t
        for d in {DEVICES!r}:
            for o in ("sgd", "adam"):
                print(d, o, t._digest(t._train_steps(d, o, steps=2)))
    """)
    # The child imports the bessemer this process runs (the source tree's or an installed wheel's).
    pkg_root = os.path.dirname(os.path.dirname(bm.__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([pkg_root, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    there = {tuple(line.split()[:2]): line.split()[2] for line in r.stdout.splitlines()}
    assert there == here


# ---- the dispatcher check: an op marked not deterministic raises, warns, or runs ----

@pytest.fixture
def index_add_marked():
    """Marks index_add's kernel as not deterministic on every device type (no real row is)."""
    for t in ("cpu", "metal-sim", "metal", "cuda"):
        bm._core._set_nondeterministic_for_testing("index_add", t, True)
    yield
    for t in ("cpu", "metal-sim", "metal", "cuda"):
        bm._core._set_nondeterministic_for_testing("index_add", t, False)


def _index_add(device):
    base = bm.zeros(4, 2, device=device)
    src = bm.ones(3, 2, device=device)
    return bm.index_add(base, 0, bm.tensor([0, 2, 0], device=device), src)


@pytest.mark.parametrize("device", DEVICES)
def test_marked_op_raises_under_the_flag(device, index_add_marked):
    expected = _index_add(device).numpy()  # flag off: runs
    bm.use_deterministic_algorithms(True)
    kind = bm.device(device).type
    with pytest.raises(RuntimeError, match=rf"\[index_add\] does not have a deterministic implementation on {kind}"):
        _index_add(device)
    bm.use_deterministic_algorithms(True, warn_only=True)
    with pytest.warns(UserWarning, match=r"\[index_add\] does not have a deterministic implementation"):
        got = _index_add(device)
    np.testing.assert_array_equal(got.numpy(), expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="index_add"):
            _index_add(device)
    bm.use_deterministic_algorithms(False)
    np.testing.assert_array_equal(_index_add(device).numpy(), expected)


@pytest.mark.parametrize("device", DEVICES)
def test_marked_op_raises_inside_backward(device, index_add_marked):
    """index_select's gradient is an index_add, run by the engine (without the GIL)."""
    w = bm.ones(5, 3, device=device).requires_grad_()
    out = bm.index_select(w, 0, bm.tensor([1, 1, 4], device=device)).sum()
    bm.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError, match=r"\[index_add\] does not have a deterministic implementation"):
        out.backward(retain_graph=True)
    bm.use_deterministic_algorithms(True, warn_only=True)
    with warnings.catch_warnings():  # a warning turned into an error crosses the engine as one
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="index_add"):
            out.backward(retain_graph=True)
    assert w.grad is None
    with pytest.warns(UserWarning, match="index_add"):
        out.backward()
    np.testing.assert_array_equal(w.grad.numpy()[:, 0], [0, 2, 0, 0, 1])


def test_unmarked_ops_run_under_the_flag():
    bm.use_deterministic_algorithms(True)
    assert bm._core._nondeterministic_on("index_add") == []
    np.testing.assert_array_equal(_index_add("cpu").numpy(), [[2, 2], [0, 0], [1, 1], [0, 0]])


# ---- docs ----

def test_docs_table_is_fresh():
    assert determinism_table.DOC.read_text() == determinism_table.render(determinism_table.DOC.read_text()), \
        "docs/determinism.md is stale: run python tools/determinism_table.py"


def test_docs_table_reflects_a_marked_row(index_add_marked):
    """Control: the generated table changes when a row is marked."""
    assert "| index_add | ✗ | ✗ | ✗ |" in determinism_table.table()
