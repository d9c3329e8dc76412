"""The test table: one row per op (tinygrad style). test_ops.py runs each row on every device,
layout and dtype through harness.check_op; test_coverage.py checks every registry op has a row.

Row fields: name, ours (bessemer fn), reference (numpy fn on float64/int64/bool arrays), number of
inputs, dtypes, input domain, and the expected output dtype rule.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import bessemer as bm
from harness import ALL_DTYPES, FLOATS, INTS


@dataclass
class Case:
    name: str  # registry op name this row covers
    ours: Callable
    reference: Callable
    nin: int = 1
    dtypes: list = field(default_factory=lambda: list(ALL_DTYPES))
    domain: str | tuple = "any"
    out: str = "same"  # same | bool | float (bool/int -> float32) | int64 | sum
    shape: tuple = (3, 4)
    shapes: tuple | None = None  # one shape per input, when the inputs differ (default: `shape` each)
    errors: dict = field(default_factory=dict)  # layout -> exception the op must raise on it
    variant: str = ""  # distinguishes several rows for one op
    tol: tuple | None = None  # (rtol, atol) overrides per-dtype defaults

    @property
    def id(self) -> str:
        return self.name + (f"[{self.variant}]" if self.variant else "")

    @property
    def input_shapes(self) -> list:
        return list(self.shapes) if self.shapes is not None else [self.shape] * self.nin


def expected_dtype(case: Case, dtype):
    if isinstance(case.out, bm.dtype):
        return case.out
    if case.out == "bool":
        return bm.bool
    if case.out == "int64":
        return bm.int64
    if case.out == "float":
        return dtype if dtype in FLOATS else bm.float32
    if case.out == "sum":
        return dtype if dtype in FLOATS else bm.int64
    return dtype


def f64(fn):
    """The reference computed in float64 (numpy would compute exp(bool) in float16)."""
    return lambda *xs: fn(*[np.asarray(x, dtype=np.float64) for x in xs])


# ---- reductions and softmax ----
# Each reduction row runs over dims None / 0 / -1 / (0, 1) / (0, 2) with keepdim False and True.
# The harness's "0d" layout gives a 0-d tensor, which accepts dim 0 and -1 only (as in torch), and
# its "empty" layout has a last dim of size 0, over which amax/argmax-style ops raise ValueError.

def _axis(x: np.ndarray, dims):
    """numpy axis for torch dims: a 0-d array takes dim 0 / -1 as 'all'."""
    if dims is None or x.ndim == 0:
        return None
    return dims


def _quiet(fn):
    """numpy warns on empty reductions (nan results); torch and bessemer do not."""
    def wrapped(*a):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*a)
    return wrapped


def _dims_id(dims, keepdim):
    d = "all" if dims is None else "_".join(str(x) for x in dims) if isinstance(dims, tuple) else str(dims)
    return f"dim{d}" + ("_keep" if keepdim else "")


REDUCE_DIMS = [(None, (3, 4)), (0, (3, 4)), (-1, (3, 4)), ((0, 1), (3, 4)), ((0, 2), (3, 4, 5))]


def _reduce_raises(dims, shape, empty_raises):
    """Layouts where `ours` must raise: dims past 0/-1 on a 0-d input; an empty reduced dim."""
    r = {}
    ds = (dims,) if isinstance(dims, int) else dims
    if ds is not None and any(d not in (0, -1) for d in ds):
        r["0d"] = IndexError
    if empty_raises and (ds is None or any(d % len(shape) == len(shape) - 1 for d in ds)):
        r["empty"] = ValueError  # the "empty" layout's last dim has size 0
    return r


def _reduce_rows(name, ours, reference, dtypes, out, empty_raises=False, dims_list=None):
    rows = []
    for dims, shape in dims_list or REDUCE_DIMS:
        for keep in (False, True):
            rows.append(Case(
                name,
                (lambda d, k: lambda x: ours(x, d, k))(dims, keep),
                _quiet((lambda d, k: lambda x: reference(x, axis=_axis(x, d), keepdims=k))(dims, keep)),
                dtypes=list(dtypes), out=out, shape=shape, variant=_dims_id(dims, keep),
                errors=_reduce_raises(dims, shape, empty_raises)))
    return rows


def _np_var(correction):
    return lambda x, axis, keepdims: np.var(x, axis=axis, ddof=correction, keepdims=keepdims)


# argmax/argmin take one dim or None (the flattened tensor; keepdim then keeps every dim as size 1,
# as numpy's keepdims does)
ARG_DIMS = [(None, (3, 4)), (0, (3, 4)), (-1, (3, 4)), (1, (3, 4, 5))]


def _softmax_ref(log):
    def ref(x, dim):
        if x.size == 0:
            return x
        ax = None if x.ndim == 0 else dim
        m = np.max(x, axis=ax, keepdims=True)
        e = np.exp(x - m)
        s = np.sum(e, axis=ax, keepdims=True)
        return (x - m) - np.log(s) if log else e / s
    return ref


def _softmax_rows(name, fn, log):
    rows = []
    for dim, shape in [(-1, (3, 4)), (0, (3, 4)), (1, (3, 4, 5)), (0, (2, 3, 4))]:
        rows.append(Case(
            name, (lambda d: lambda x: fn(x, d))(dim), (lambda d: lambda x: _softmax_ref(log)(x, d))(dim),
            dtypes=list(FLOATS), shape=shape, variant=f"dim{dim}_{len(shape)}d",
            errors={"0d": IndexError} if dim not in (0, -1) else {}))
    return rows


REDUCE_CASES: list[Case] = [
    *_reduce_rows("sum", lambda x, d, k: x.sum(dim=d, keepdim=k), np.sum, ALL_DTYPES, "sum"),
    *_reduce_rows("mean", lambda x, d, k: x.mean(dim=d, keepdim=k), np.mean, FLOATS, "same"),
    *_reduce_rows("var", lambda x, d, k: x.var(dim=d, keepdim=k), _np_var(1), FLOATS, "same"),
    *[Case("var", (lambda c: lambda x: bm.var(x, dim=-1, correction=c))(c),
           _quiet((lambda c: lambda x: np.var(x, axis=_axis(x, -1), ddof=c))(c)),
           dtypes=list(FLOATS), variant=f"correction{c}") for c in (0, 2)],
    *_reduce_rows("amax", lambda x, d, k: x.amax(dim=() if d is None else d, keepdim=k), np.max, ALL_DTYPES,
                  "same", empty_raises=True),
    *_reduce_rows("amin", lambda x, d, k: x.amin(dim=() if d is None else d, keepdim=k), np.min, ALL_DTYPES,
                  "same", empty_raises=True),
    *_reduce_rows("argmax", lambda x, d, k: x.argmax(dim=d, keepdim=k), np.argmax, FLOATS + INTS, "int64",
                  empty_raises=True, dims_list=ARG_DIMS),
    *_reduce_rows("argmin", lambda x, d, k: x.argmin(dim=d, keepdim=k), np.argmin, FLOATS + INTS, "int64",
                  empty_raises=True, dims_list=ARG_DIMS),
]

SOFTMAX_CASES: list[Case] = [
    *_softmax_rows("softmax", lambda x, d: bm.softmax(x, d), log=False),
    *_softmax_rows("log_softmax", lambda x, d: bm.log_softmax(x, d), log=True),
]


CASES: list[Case] = [
    # ---- copies and casts ----
    Case("copy", lambda x: x.contiguous() if not x.is_contiguous() else x.clone(), lambda x: x, variant="clone"),
    *[Case("copy", (lambda d: lambda x: x.to(d))(d),
           (lambda d: lambda x: (x != 0) if d == bm.bool else np.trunc(x) if d in INTS else x)(d),
           variant=f"to_{d.name}", out=d) for d in ALL_DTYPES],
    Case("fill", lambda x: bm.full(x.shape, 2.5, dtype=x.dtype, device=x.device), lambda x: np.full(x.shape, 2.5),
         dtypes=list(FLOATS)),
    Case("fill", lambda x: bm.full(x.shape, 7, dtype=x.dtype, device=x.device), lambda x: np.full(x.shape, 7),
         dtypes=list(INTS), variant="int"),
    Case("arange", lambda x: bm.arange(3, 3 + x.numel(), dtype=x.dtype, device=x.device).reshape(x.shape),
         lambda x: np.arange(3, 3 + x.size).reshape(x.shape), dtypes=[d for d in ALL_DTYPES if d != bm.bool]),
    # ---- matmul: the "empty" layout zeroes every input's last dim, which leaves a valid K == 0
    # product only when the second input is 1-D; 0-d inputs are an error as in torch ----
    *[Case("matmul", lambda a, b: a @ b, np.matmul, nin=2, dtypes=list(FLOATS + INTS), shapes=shapes,
           variant=variant, errors={"0d": ValueError, **({} if ok_empty else {"empty": ValueError})})
      for variant, shapes, ok_empty in [
          ("2d", ((3, 4), (4, 5)), False),
          ("vec_mat", ((4,), (4, 5)), False),
          ("mat_vec", ((3, 4), (4,)), True),
          ("dot", ((4,), (4,)), True),
          ("batched", ((2, 1, 3, 4), (3, 4, 5)), False),
      ]],
    # ---- unary elementwise ----
    Case("neg", lambda x: -x, np.negative, dtypes=FLOATS + INTS),
    Case("neg", bm.neg, np.negative, dtypes=FLOATS + INTS, variant="fn"),
    Case("abs", abs, np.abs, dtypes=FLOATS + INTS),
    Case("relu", bm.relu, lambda x: np.maximum(x, 0), dtypes=FLOATS + INTS),
    Case("clamp", lambda x: bm.clamp(x, -1, 2), lambda x: np.clip(x, -1, 2), dtypes=FLOATS + INTS),
    Case("clamp", lambda x: x.clamp(min=0.5), lambda x: np.maximum(x, 0.5), dtypes=FLOATS, variant="min"),
    Case("clamp", lambda x: bm.clamp(x, max=1), lambda x: np.minimum(x, 1), dtypes=FLOATS + INTS, variant="max"),
    # bool/int inputs are computed in float32 (torch's int -> float promotion for these ops).
    Case("exp", bm.exp, f64(np.exp), out="float"),
    Case("log", bm.log, f64(np.log), domain="pos", out="float"),
    Case("sqrt", bm.sqrt, f64(np.sqrt), domain="pos", out="float"),
    Case("rsqrt", bm.rsqrt, f64(lambda x: 1 / np.sqrt(x)), domain="pos", out="float"),
    Case("sin", bm.sin, f64(np.sin), out="float"),
    Case("cos", bm.cos, f64(np.cos), out="float"),
    Case("tanh", bm.tanh, f64(np.tanh), out="float"),
    Case("sigmoid", bm.sigmoid, f64(lambda x: 1 / (1 + np.exp(-x))), out="float"),
    # ---- binary elementwise (same-dtype inputs; promotion is in test_elementwise.py) ----
    Case("add", lambda a, b: a + b, np.add, nin=2),  # bool: logical or
    Case("sub", lambda a, b: a - b, np.subtract, nin=2, dtypes=FLOATS + INTS),
    Case("mul", lambda a, b: a * b, np.multiply, nin=2),  # bool: logical and
    Case("div", lambda a, b: a / b, f64(np.true_divide), nin=2, out="float"),
    Case("pow", lambda a, b: a ** b, np.power, nin=2, dtypes=FLOATS + INTS, domain=("small", "exp"),
         variant="int_exp"),
    Case("pow", bm.pow, np.power, nin=2, dtypes=FLOATS, domain=("pos", "small"), variant="float_exp"),
    Case("maximum", bm.maximum, np.maximum, nin=2),
    Case("minimum", bm.minimum, np.minimum, nin=2),
    # Small-integer inputs ("exp" domain) so equal pairs occur.
    Case("eq", lambda a, b: a == b, np.equal, nin=2, domain="exp", out="bool"),
    Case("ne", lambda a, b: a != b, np.not_equal, nin=2, domain="exp", out="bool"),
    Case("lt", lambda a, b: a < b, np.less, nin=2, domain="exp", out="bool"),
    Case("le", lambda a, b: a <= b, np.less_equal, nin=2, domain="exp", out="bool"),
    Case("gt", bm.gt, np.greater, nin=2, domain="exp", out="bool"),
    Case("ge", bm.ge, np.greater_equal, nin=2, domain="exp", out="bool"),
    # where: the bool-dtype row passes the condition in the tested layout; the other row derives it.
    Case("where", bm.where, np.where, nin=3, dtypes=[bm.bool], variant="bool_cond"),
    Case("where", lambda x, a, b: bm.where(x > 0, a, b), lambda x, a, b: np.where(x > 0, a, b), nin=3),
    # ---- Python numbers on either side ----
    Case("add", lambda x: x + 2, lambda x: x + 2, dtypes=FLOATS + INTS, variant="scalar"),
    Case("sub", lambda x: 2 - x, lambda x: 2 - x, dtypes=FLOATS + INTS, variant="rscalar"),
    Case("mul", lambda x: 1.5 * x, lambda x: 1.5 * x, dtypes=FLOATS, variant="rscalar"),
    Case("div", lambda x: x / 3, f64(lambda x: x / 3), out="float", variant="scalar"),
    Case("pow", lambda x: x ** 2, lambda x: x ** 2, dtypes=FLOATS + INTS, variant="square"),
    Case("pow", lambda x: 2 ** x, lambda x: 2.0 ** x, dtypes=FLOATS + INTS, domain="exp", variant="rscalar"),
    Case("maximum", lambda x: bm.maximum(x, 0.5), lambda x: np.maximum(x, 0.5), dtypes=FLOATS, variant="scalar"),
    Case("lt", lambda x: x < 1, lambda x: x < 1, domain="exp", out="bool", variant="scalar"),
    Case("where", lambda x: bm.where(x > 0, x, 0), lambda x: np.where(x > 0, x, 0), dtypes=FLOATS + INTS,
         variant="scalar"),
    *REDUCE_CASES,
    *SOFTMAX_CASES,
]


# ---- conv2d (tests/test_conv.py compares with torch over many more argument combinations) ----
def _np_conv2d(stride=1, padding=0, dilation=1, groups=1):
    """conv2d in float64: per kernel tap, a strided window of the zero-padded input times weights."""
    def ref(x, w, b=None):
        n, _, h, wd = x.shape
        o, cg, kh, kw = w.shape
        xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
        oh = (h + 2 * padding - dilation * (kh - 1) - 1) // stride + 1
        ow = (wd + 2 * padding - dilation * (kw - 1) - 1) // stride + 1
        out = np.zeros((n, o, oh, ow))
        og = o // groups
        for g in range(groups):
            for ky in range(kh):
                for kx in range(kw):
                    win = xp[:, g * cg:(g + 1) * cg, ky * dilation:ky * dilation + stride * (oh - 1) + 1:stride,
                             kx * dilation:kx * dilation + stride * (ow - 1) + 1:stride]
                    out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", win, w[g * og:(g + 1) * og, :, ky, kx])
        return out if b is None else out + b[None, :, None, None]
    return ref


CASES += [
    # the "0d" layout has no 4-D input and the "empty" one a zero-width kernel: both rejected
    Case("conv2d", lambda x, w, b: bm.nn.functional.conv2d(x, w, b, padding=1, groups=2),
         _np_conv2d(padding=1, groups=2), nin=3, dtypes=list(FLOATS), shapes=((2, 4, 5, 6), (6, 2, 3, 3), (6,)),
         variant="groups2_pad1", errors={"0d": ValueError, "empty": ValueError}),
    Case("conv2d", lambda x, w: bm.nn.functional.conv2d(x, w, stride=2, dilation=2),
         _np_conv2d(stride=2, dilation=2), nin=2, dtypes=list(FLOATS), shapes=((1, 3, 9, 8), (4, 3, 2, 3)),
         variant="stride2_dilation2", errors={"0d": ValueError, "empty": ValueError}),
]
