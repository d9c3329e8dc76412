"""Every op on every backend: the registry's declared cells all have kernels, every op has a test
row, and the checked-in coverage matrix (docs/ops.md) matches the registry."""

import pathlib
import sys

import pytest

from bessemer import _core
from op_cases import CASES

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tools"))
import coverage_matrix  # noqa: E402

OPS = [row["name"] for row in _core.op_table()]


@pytest.mark.parametrize("op", OPS)
def test_every_declared_cell_has_a_kernel(op):
    missing = [f"{dev}/{dt.name}" for o, dev, dt, state in coverage_matrix.matrix() if o == op and state == "missing"]
    assert not missing, f"[{op}] declared but no kernel on: {', '.join(missing)}"


# Ops whose results cannot be compared with a NumPy expression are tested in their own module,
# against an independent oracle there (random draws: a NumPy Philox implementation).
DEDICATED = {"uniform": "test_random.py", "normal": "test_random.py"}


@pytest.mark.parametrize("op", OPS)
def test_every_op_has_a_test_row(op):
    if op in DEDICATED:
        text = (pathlib.Path(__file__).parent / DEDICATED[op]).read_text()
        assert f"{op}" in text or {"uniform": "rand(", "normal": "randn("}[op] in text
        return
    assert any(c.name == op for c in CASES), f"op {op} has no row in tests/op_cases.py"


def test_coverage_doc_is_current():
    assert coverage_matrix.DOC.read_text() == coverage_matrix.render(), \
        "docs/ops.md is stale: run python tools/coverage_matrix.py"
