"""The test table: one row per op (tinygrad style). test_ops.py runs each row on every device,
layout and dtype through harness.check_op; test_coverage.py checks every registry op has a row.

Row fields: name, ours (bessemer fn), reference (numpy fn on float64/int64/bool arrays), number of
inputs, dtypes, input domain, and the expected output dtype rule.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

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


# ---- pooling (tests/test_pool.py compares many more argument combinations with torch) ----
# Inputs are (N, C, H, W); the harness's "0d" and "empty" (W == 0) layouts are errors, as in torch.

def _pool_out(n, k, s, p, d, ceil):
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    return o - 1 if ceil and (o - 1) * s >= n + p else o


def _pool_windows(x, k, s, p, d, outs, fill):
    """One (..., OH, OW) array per window offset (i, j): the value there, or `fill` in padding."""
    (oh, ow), pads = outs, []
    for n, o in zip(x.shape[-2:], outs, strict=True):
        pads.append((p, max(p, (o - 1) * s + (k - 1) * d + 1 - n - p)))
    xp = np.pad(x, [(0, 0)] * (x.ndim - 2) + pads, constant_values=fill)
    return [xp[..., i * d:i * d + (oh - 1) * s + 1:s, j * d:j * d + (ow - 1) * s + 1:s]
            for i in range(k) for j in range(k)]


def _np_max_pool(k, s, p, d=1, ceil=False):
    def ref(x):
        outs = [_pool_out(n, k, s, p, d, ceil) for n in x.shape[-2:]]
        fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        return np.max(np.stack(_pool_windows(x, k, s, p, d, outs, fill)), axis=0)
    return ref


def _np_avg_pool(k, s, p, ceil=False, include_pad=True):
    def ref(x):
        H, W = x.shape[-2:]
        outs = [_pool_out(n, k, s, p, 1, ceil) for n in (H, W)]
        total = np.sum(np.stack(_pool_windows(x, k, s, p, 1, outs, 0.0)), axis=0)
        # the count with padding clips the window to the padded input, without it to the input
        ones = np.ones((H + 2 * p, W + 2 * p) if include_pad else (H, W))
        count = np.sum(np.stack(_pool_windows(ones, k, s, 0 if include_pad else p, 1, outs, 0.0)), axis=0)
        return total / count
    return ref


def _np_adaptive_avg_pool(oh, ow):
    def ref(x):
        H, W = x.shape[-2:]
        out = np.empty(x.shape[:-2] + (oh, ow))
        for i in range(oh):
            for j in range(ow):
                hs, he = i * H // oh, -(-(i + 1) * H // oh)
                ws, we = j * W // ow, -(-(j + 1) * W // ow)
                out[..., i, j] = x[..., hs:he, ws:we].mean(axis=(-2, -1))
        return out
    return ref


_POOL_ERRORS = {"0d": ValueError, "empty": ValueError}
_POOL_SHAPE = (2, 3, 5, 6)

POOL_CASES: list[Case] = [
    Case("max_pool2d", lambda x: bm.nn.functional.max_pool2d(x, 3, 2, 1), _np_max_pool(3, 2, 1),
         dtypes=FLOATS + INTS, shape=_POOL_SHAPE, errors=_POOL_ERRORS),
    Case("max_pool2d", lambda x: bm.nn.functional.max_pool2d(x, 2), _np_max_pool(2, 2, 0),
         dtypes=FLOATS + INTS, shape=_POOL_SHAPE, errors=_POOL_ERRORS, variant="k2"),
    Case("max_pool2d", lambda x: bm.nn.functional.max_pool2d(x, 2, 2, 1, dilation=2, ceil_mode=True),
         _np_max_pool(2, 2, 1, 2, True), dtypes=FLOATS + INTS, shape=_POOL_SHAPE, errors=_POOL_ERRORS,
         variant="dilation_ceil"),
    Case("avg_pool2d", lambda x: bm.nn.functional.avg_pool2d(x, 3, 2, 1), _np_avg_pool(3, 2, 1),
         dtypes=list(FLOATS), shape=_POOL_SHAPE, errors=_POOL_ERRORS),
    Case("avg_pool2d", lambda x: bm.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
         _np_avg_pool(3, 2, 1, True, False), dtypes=list(FLOATS), shape=_POOL_SHAPE, errors=_POOL_ERRORS,
         variant="ceil_exclude_pad"),
    Case("adaptive_avg_pool2d", lambda x: bm.nn.functional.adaptive_avg_pool2d(x, (3, 4)),
         _np_adaptive_avg_pool(3, 4), dtypes=list(FLOATS), shape=_POOL_SHAPE, errors=_POOL_ERRORS),
    Case("adaptive_avg_pool2d", lambda x: bm.nn.functional.adaptive_avg_pool2d(x, 1),
         _np_adaptive_avg_pool(1, 1), dtypes=list(FLOATS), shape=_POOL_SHAPE, errors=_POOL_ERRORS, variant="1x1"),
]
CASES += POOL_CASES
# ---- activations and normalisation (issue 4, nn-norm) ----
# Their torch-parity, training and error tests live in test_norm.py and test_activation.py; these
# rows run them through every layout and dtype against float64 NumPy.

import math  # noqa: E402  (appended section; the file's own imports stay as they are)


def _gelu_ref(x):
    erfc = np.vectorize(math.erfc, otypes=[np.float64])
    return x * 0.5 * erfc(-x / math.sqrt(2)) if x.size else x


def _gelu_tanh_ref(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def _channel(v, ndim):
    """A (C,) array shaped to broadcast along dim 1 of an ndim-dim input."""
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _layer_norm_ref(k):
    @_quiet
    def ref(x, w=None, b=None):
        axes = tuple(range(x.ndim - k, x.ndim))
        y = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + 1e-5)
        return y * (1 if w is None else w) + (0 if b is None else b)
    return ref


@_quiet
def _batch_norm_batch_ref(x, w=None, b=None):
    axes = (0,) + tuple(range(2, x.ndim))
    y = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + 1e-5)
    return y * (1 if w is None else _channel(w, x.ndim)) + (0 if b is None else _channel(b, x.ndim))


def _batch_norm_eval_ref(x, m, v):
    return (x - _channel(m, x.ndim)) / np.sqrt(_channel(v, x.ndim) + 1e-5)


NORM_CASES: list[Case] = [
    Case("gelu", lambda x: bm.nn.functional.gelu(x), _gelu_ref, dtypes=list(FLOATS)),
    Case("gelu_tanh", lambda x: bm.nn.functional.gelu(x, approximate="tanh"), f64(_gelu_tanh_ref),
         dtypes=list(FLOATS)),
    Case("silu", lambda x: bm.nn.functional.silu(x), f64(lambda x: x / (1 + np.exp(-x))), dtypes=list(FLOATS)),
    # layer_norm: the "0d" layout has no dim to normalise; "empty" normalises a size-0 last dim.
    Case("layer_norm", lambda x: bm.nn.functional.layer_norm(x, x.shape[-1:]), _layer_norm_ref(1),
         dtypes=list(FLOATS), shape=(2, 3, 4), errors={"0d": ValueError}),
    Case("layer_norm", lambda x, w, b: bm.nn.functional.layer_norm(x, w.shape, w, b), _layer_norm_ref(1),
         nin=3, dtypes=list(FLOATS), shapes=((2, 3, 4), (4,), (4,)), errors={"0d": ValueError}, variant="affine"),
    Case("layer_norm", lambda x, w, b: bm.nn.functional.layer_norm(x, w.shape, w, b), _layer_norm_ref(2),
         nin=3, dtypes=list(FLOATS), shapes=((2, 3, 4), (3, 4), (3, 4)), errors={"0d": ValueError},
         variant="last2"),
    # batch_norm: channels are dim 1; the "empty" layout gives the running stats 0 channels, 3 expected.
    Case("batch_norm", lambda x, m, v: bm.nn.functional.batch_norm(x, m, v), _batch_norm_eval_ref, nin=3,
         dtypes=list(FLOATS), shapes=((2, 3, 4), (3,), (3,)), domain=("any", "any", "pos"),
         errors={"0d": ValueError, "empty": ValueError}, variant="eval"),
    Case("batch_norm", lambda x, w, b: bm.nn.functional.batch_norm(x, None, None, w, b, training=True),
         _batch_norm_batch_ref, nin=3, dtypes=list(FLOATS), shapes=((2, 3, 4), (3,), (3,)),
         errors={"0d": ValueError, "empty": ValueError}, variant="train_affine"),
    Case("batch_norm", lambda x: bm.nn.functional.batch_norm(x, None, None, training=True), _batch_norm_batch_ref,
         dtypes=list(FLOATS), shape=(3, 2, 2, 3), errors={"0d": ValueError}, variant="train_4d"),
]
CASES += NORM_CASES
# ---- dropout, embedding, nll_loss (more in test_nn_misc.py, against torch) ----
def _nn_misc_cases() -> list[Case]:
    from test_random import philox_numpy

    from bessemer import _core
    from bessemer.nn import functional as F

    def dropout_ref(p, seed):
        def ref(x):  # Philox word i % 4 of block i / 4 decides element i (logical order)
            words = philox_numpy(seed, np.arange((x.size + 3) // 4, dtype=np.uint64)).reshape(-1)[:x.size]
            keep = (words >> 8).astype(np.float64) * 2.0**-24 >= np.float32(p)
            return x * np.where(keep, 1 / (1 - p), 0).reshape(x.shape)
        return ref

    def dropout_ours(p, seed):
        return lambda x: _core.dropout(x, p, True, bm.Generator(x.device).manual_seed(seed)._g)

    idx = np.array([[0, 4, 2], [1, 1, 3]])
    table = np.arange(20, dtype=np.float32).reshape(5, 4) / 4 - 2
    target = np.array([0, 4, 2, 3])
    weight = np.array([0.5, 1.0, 2.0, 1.5, 0.25])

    def nll_ref(reduction, w=None, ignore=None):
        def ref(x):
            valid = target != ignore
            t = np.where(valid, target, 0)
            ws = (np.ones(5) if w is None else w)[t] * valid
            losses = -ws * x[np.arange(len(t)), t]
            return {"none": losses, "sum": losses.sum(), "mean": losses.sum() / ws.sum()}[reduction]
        return ref

    def nll_ours(reduction, w=None, ignore=None):
        tgt = target if ignore is None else np.where(target == ignore, -100, target)
        def ours(x):
            wt = None if w is None else bm.tensor(w, dtype=x.dtype, device=x.device)
            return F.nll_loss(x, bm.tensor(tgt, device=x.device), wt, reduction=reduction)
        return ours

    # nll_loss inputs must be (N, C): the 0d layout has no class dim, the empty layout no classes
    # (every target is out of range).
    nll_errors = {"0d": ValueError, "empty": IndexError}
    return [
        *[Case("dropout", dropout_ours(p, 7), dropout_ref(p, 7), dtypes=list(FLOATS), shape=(3, 5),
               variant=f"p{p}") for p in (0.3, 0.5)],
        Case("embedding", lambda w: F.embedding(bm.tensor(idx, device=w.device), w), lambda w: w[idx],
             shape=(5, 4), errors={"0d": ValueError}, variant="weight"),
        Case("embedding", lambda i: F.embedding(i, bm.tensor(table, device=i.device)),
             lambda i: table[i.astype(np.int64)], dtypes=[bm.int32, bm.int64], domain="exp", out=bm.float32,
             variant="indices"),
        *[Case("nll_loss", nll_ours(r), nll_ref(r), dtypes=list(FLOATS), shape=(4, 5), errors=nll_errors,
               variant=r) for r in ("none", "sum", "mean")],
        *[Case("nll_loss", nll_ours(r, weight, 2), nll_ref(r, weight, 2), dtypes=list(FLOATS), shape=(4, 5),
               errors={"0d": ValueError, "empty": ValueError},  # 5 weights for 0 classes
               variant=f"{r}_weight_ignore") for r in ("none", "mean")],
    ]


CASES += _nn_misc_cases()
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


# ---- the training issue's rows (backward kernels, optimizer steps, indexing): op_cases_training.py.
# Imported last: it takes Case and the helpers above from this (then complete) module.
from op_cases_training import training_cases  # noqa: E402

CASES += training_cases()

# ---- issue 12's reductions, scans and sorting rows (prod, cumsum, cumprod, argsort): op_cases_reduce.py.
from op_cases_reduce import reduce_cases  # noqa: E402

CASES += reduce_cases()

# ---- the dtypes part's rows (conversions, *_like factories, randint): op_cases_dtypes.py ----
from op_cases_dtypes import dtypes_cases  # noqa: E402

CASES += dtypes_cases()

# ---- issue 12's elementwise math rows: op_cases_elementwise.py, imported as the training rows are.
from op_cases_elementwise import elementwise_cases  # noqa: E402

CASES += elementwise_cases()

# ---- the shape functions' rows (flip, gather, scatter, einsum...): op_cases_shape.py ----
from op_cases_shape import shape_cases  # noqa: E402

CASES += shape_cases()
