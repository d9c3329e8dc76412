"""Errors at the Python boundary name the op and what was wrong: sizes, dims and indices beyond 64
bits (never pybind11's cast message), shapes whose element count overflows, and saving into a
folder that does not exist (the path the user gave, never a temporary file)."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import bessemer as bm
from harness import DEVICES

BIG = 2**70
HUGE = [BIG, 2**64, 2**63, -(2**63) - 1]


def _fits(msg_op: str, n: int) -> str:
    return rf"^\[{re.escape(msg_op)}\] \w+ {n} does not fit in 64 bits"


@pytest.mark.parametrize("n", HUGE)
@pytest.mark.parametrize("device", DEVICES)
def test_factory_sizes(n, device):
    cases = {
        "zeros": lambda: bm.zeros(n, device=device),
        "ones": lambda: bm.ones(3, n, device=device),
        "empty": lambda: bm.empty((2, n), device=device),
        "full": lambda: bm.full((n,), 1.0, device=device),
        "rand": lambda: bm.rand(n, device=device),
        "randn": lambda: bm.randn([n], device=device),
    }
    for op, make in cases.items():
        with pytest.raises(ValueError, match=_fits(op, n)):
            make()


@pytest.mark.parametrize("n", HUGE)
def test_view_and_shape_methods(n):
    x = bm.arange(6, dtype=bm.float32).reshape(2, 3)
    cases = {
        "reshape": [lambda: x.reshape(n), lambda: x.reshape((2, n)), lambda: bm.reshape(x, [n])],
        "view": [lambda: x.view(n, 1)],
        "expand": [lambda: x.expand(n, 2, 3)],
        "permute": [lambda: x.permute(0, n)],
        "squeeze": [lambda: x.squeeze(n)],
        "transpose": [lambda: x.transpose(n, 0), lambda: x.transpose(0, n)],
        "unsqueeze": [lambda: x.unsqueeze(n)],
        "flatten": [lambda: x.flatten(n)],
        "size": [lambda: x.size(n)],
        "stride": [lambda: x.stride(n)],
        "sum": [lambda: x.sum(dim=n)],
        "argmax": [lambda: x.argmax(dim=n)],
        "softmax": [lambda: x.softmax(n)],
        "log_softmax": [lambda: x.log_softmax(n)],
        "cat": [lambda: bm.cat([x, x], dim=n)],
        "stack": [lambda: bm.stack([x, x], dim=n)],
        "index_select": [lambda: bm.index_select(x, n, bm.tensor([0]))],
        "index": [lambda: x[n], lambda: x[0, n], lambda: x[np.int64(0), n]],
    }
    for op, calls in cases.items():
        for call in calls:
            with pytest.raises(ValueError, match=_fits(op, n)):
                call()
    assert x.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]  # nothing changed


def test_slices_beyond_64_bits_clamp_as_python_does():
    x = bm.arange(5)
    ref = list(range(5))
    for s in (slice(0, BIG), slice(-BIG, 3), slice(1, None, 2**63 - 1), slice(2, BIG, BIG)):
        assert x[s].tolist() == ref[s]


def test_shapes_whose_element_count_overflows():
    for make in (lambda: bm.empty((1 << 40, 1 << 40)), lambda: bm.zeros(1 << 32, 1 << 32),
                 lambda: bm.ones((1 << 62, 4))):
        with pytest.raises(MemoryError, match=r"^\[(empty|full|fill)\] shape \(\d+, \d+\) is too large"):
            make()


def test_scalars_beyond_64_bits():
    with pytest.raises(ValueError, match=r"^\[add\] integer \d+ does not fit in int64"):
        bm.ones(2) + BIG
    with pytest.raises(ValueError, match=r"^\[full\] integer \d+ does not fit in int64"):
        bm.full((2,), BIG)


# ------------------------------------------------------------------------------------- saving


def _savers(path):
    model = bm.nn.Linear(2, 2)
    return {
        "save": lambda: bm.save({"w": bm.ones(2)}, path),
        "save_file": lambda: bm.save_file({"w": bm.ones(2)}, path),
        "save_model": lambda: bm.save_model(model, path),
    }


@pytest.mark.parametrize("kind", ["save", "save_file", "save_model"])
def test_saving_into_a_missing_folder_names_the_path(tmp_path, kind):
    path = tmp_path / "no_such_dir" / "ckpt.bin"
    with pytest.raises(FileNotFoundError) as ei:
        _savers(path)[kind]()
    msg = str(ei.value)
    op = "save" if kind == "save" else "save_file"
    assert msg.startswith(f"[{op}] cannot save to {str(path)!r}"), msg
    assert "does not exist" in msg and ".tmp" not in msg and ".bessemer-save" not in msg
    assert ei.value.errno == 2
    assert not (tmp_path / "no_such_dir").exists()


@pytest.mark.parametrize("kind", ["save", "save_file", "save_model"])
def test_saving_where_a_file_cannot_be_names_the_path(tmp_path, kind):
    (tmp_path / "a_file").write_bytes(b"x")
    (tmp_path / "a_dir").mkdir()
    op = "save" if kind == "save" else "save_file"
    under_a_file = tmp_path / "a_file" / "x.bin"  # the "folder" is a file
    with pytest.raises(NotADirectoryError, match=rf"^\[{op}\] cannot save to '.*x\.bin': the folder .* is not a"):
        _savers(under_a_file)[kind]()
    with pytest.raises(IsADirectoryError, match=rf"^\[{op}\] cannot save to '.*a_dir'"):
        _savers(tmp_path / "a_dir")[kind]()  # the path is a folder
    assert sorted(os.listdir(tmp_path)) == ["a_dir", "a_file"]  # no temporary file left behind
    assert os.listdir(tmp_path / "a_dir") == []


def test_saving_still_works(tmp_path):
    for kind, save in _savers(tmp_path / "ok.bin").items():
        save()
        assert (tmp_path / "ok.bin").stat().st_size > 0, kind
        os.remove(tmp_path / "ok.bin")
