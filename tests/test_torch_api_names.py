"""Every torch name of issue 12 ("the tensor API a PyTorch user reaches for") exists in bessemer
where torch has it: as ``bm.name`` when ``torch.name`` exists, as a Tensor method or property when
``torch.Tensor.name`` does, and ``bm.linalg.vector_norm``. Where each name lives is read from
torch (the pinned test dependency), so a name torch has in both places must be in both here.
What the functions compute is tested by their op rows; this test only keeps the list complete.
"""

from __future__ import annotations

import pytest
import torch

import bessemer as bm

FACTORIES = """zeros_like ones_like full_like empty_like rand_like randn_like eye linspace logspace randint
    randperm get_default_dtype set_default_dtype"""
ELEMENTWISE = """log1p expm1 log2 log10 exp2 sign floor ceil round trunc frac reciprocal square erf erfinv
    atan2 hypot lerp fmod remainder floor_divide isnan isinf isfinite nan_to_num logical_and logical_or
    logical_not logical_xor bitwise_and bitwise_or bitwise_xor bitwise_not"""
REDUCTIONS = """std prod any all logsumexp norm linalg.vector_norm cumsum cumprod max min median topk sort
    argsort unique count_nonzero allclose isclose equal"""
SHAPE = """t mT mm bmm outer einsum split chunk unbind flip roll repeat repeat_interleave tile narrow movedim
    swapaxes tril triu gather scatter scatter_add index_select masked_fill where nonzero"""
DTYPES = "int8 uint8 int16"
DTYPE_METHODS = "type float half bfloat16 int long bool"
INTEROP = "from_dlpack __dlpack__ __dlpack_device__"

NAMES = " ".join([FACTORIES, ELEMENTWISE, REDUCTIONS, SHAPE, DTYPES, DTYPE_METHODS, INTEROP]).split()

# The operators of the list (% // & | ^ ~), both ways where Python reflects them.
OPERATORS = ["__mod__", "__rmod__", "__floordiv__", "__rfloordiv__", "__and__", "__rand__", "__or__", "__ror__",
             "__xor__", "__rxor__", "__invert__"]


def _resolve(root, dotted: str):
    for part in dotted.split("."):
        if not hasattr(root, part):
            return None
        root = getattr(root, part)
    return root


def _torch_places(name: str) -> list[str]:
    places = []
    if _resolve(torch, name) is not None:
        places.append("module")
    if "." not in name and _has_method(torch.Tensor, name):
        places.append("Tensor")
    return places


def _has_method(cls, name: str) -> bool:
    # In the class's own dicts: hasattr(cls, "__or__") is True for every class (type's | for unions).
    return any(name in vars(c) for c in cls.__mro__)


def _missing(name: str) -> list[str]:
    missing = []
    for place in _torch_places(name):
        if place == "module" and _resolve(bm, name) is None:
            missing.append(f"bm.{name}")
        if place == "Tensor" and not _has_method(bm.Tensor, name):
            missing.append(f"Tensor.{name}")
    return missing


def test_the_list_is_torchs():
    # Every listed name is a torch name (a typo here would pass unnoticed otherwise), listed once.
    assert [n for n in NAMES if not _torch_places(n)] == []
    assert len(NAMES) == len(set(NAMES))
    assert [op for op in OPERATORS if not _has_method(torch.Tensor, op)] == []


@pytest.mark.parametrize("name", NAMES)
def test_name_exists(name):
    missing = _missing(name)
    assert not missing, f"bessemer lacks {', '.join(missing)} (torch has {' and '.join(_torch_places(name))})"


@pytest.mark.parametrize("op", OPERATORS)
def test_operator_exists(op):
    assert _has_method(bm.Tensor, op), f"bessemer's Tensor lacks {op}"


def test_dtype_names_are_dtypes():
    # bm.int8 & co. must be dtypes (as torch's), not just any attribute of that name.
    for name in DTYPES.split() + ["float", "half", "bfloat16", "int", "long", "bool"]:
        if hasattr(bm, name):
            assert isinstance(getattr(bm, name), bm.dtype), name
