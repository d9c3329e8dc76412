"""Test-table rows for the training issue's ops (op_cases.py imports them into CASES): the conv and
pool gradients, the backward kernels of softmax, the activations, the norms and nll_loss, the fused
optimizer steps, and the indexing rows with floor_divide / remainder / any / all."""

from __future__ import annotations

import math

import numpy as np

import bessemer as bm
from harness import ALL_DTYPES, FLOATS, INTS
from op_cases import Case, _quiet, _reduce_rows, f64  # noqa: F401  (op_cases is complete when it imports us)

_CASES: list[Case] = []

# ---- conv / pool backward (tests/test_conv_backward.py and test_pool_backward.py compare with torch's gradients over
# many more argument combinations and layouts) ----
def _torch64(a):
    import torch
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64))


def _np_conv_grad_input(input_shape, **kw):
    def ref(g, w):
        import torch
        return torch.nn.grad.conv2d_input(input_shape, _torch64(w), _torch64(g), **kw).numpy()
    return ref


def _np_conv_grad_weight(weight_shape, **kw):
    def ref(g, x):
        import torch
        return torch.nn.grad.conv2d_weight(_torch64(x), weight_shape, _torch64(g), **kw).numpy()
    return ref


# The indices the max_pool2d_backward row routes through: max_pool2d_with_indices of a fixed input
# of small integers (many ties, so overlapping windows often pick the same element), from torch.
_BWD_POOL_IN = (2, 3, 5, 6)
_BWD_MAX_X = np.random.default_rng(21).integers(-2, 3, _BWD_POOL_IN).astype(np.float64)


def _bwd_max_indices():
    import torch
    return torch.nn.functional.max_pool2d(_torch64(_BWD_MAX_X), 3, 1, 1, return_indices=True)[1].numpy()


def _np_max_pool_backward(g):
    """Each window's gradient added to the element its index names (torch's scatter)."""
    n, c, h, w = _BWD_POOL_IN
    idx = _bwd_max_indices().reshape(n * c, -1)
    out = np.zeros((n * c, h * w))
    gg = np.asarray(g, dtype=np.float64).reshape(n * c, -1)
    for p in range(n * c):
        np.add.at(out[p], idx[p], gg[p])
    return out.reshape(_BWD_POOL_IN)


def _np_avg_pool_backward(g):
    import torch
    x = _torch64(np.zeros(_BWD_POOL_IN)).requires_grad_()
    torch.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False).backward(_torch64(g))
    return x.grad.numpy()


def _np_adaptive_avg_pool_backward(g):
    """Each window's gradient spread evenly over it (any output size, zero included)."""
    H, W = _BWD_POOL_IN[2:]
    oh, ow = g.shape[-2:]
    out = np.zeros(_BWD_POOL_IN)
    for i in range(oh):
        for j in range(ow):
            hs, he = i * H // oh, -(-(i + 1) * H // oh)
            ws, we = j * W // ow, -(-(j + 1) * W // ow)
            out[..., hs:he, ws:we] += g[..., i:i + 1, j:j + 1] / ((he - hs) * (we - ws))
    return out


_BWD_ERRORS = {"0d": ValueError, "empty": ValueError}

_CASES += [
    Case("conv2d_backward_input",
         lambda g, w: bm._core._conv2d_backward_input(g, w, (1, 2, 4, 5), 1, 1),
         _np_conv_grad_input((1, 2, 4, 5), padding=1), nin=2, dtypes=list(FLOATS),
         shapes=((1, 3, 4, 5), (3, 2, 3, 3)), errors=_BWD_ERRORS),
    Case("conv2d_backward_weight",
         lambda g, x: bm._core._conv2d_backward_weight(g, x, (4, 2, 3, 3), 2, 0, 1, 2),
         _np_conv_grad_weight((4, 2, 3, 3), stride=2, groups=2), nin=2, dtypes=list(FLOATS),
         shapes=((2, 4, 2, 2), (2, 4, 5, 6)), errors=_BWD_ERRORS),
    Case("max_pool2d_with_indices",
         lambda x: bm.nn.functional.max_pool2d(x, 3, 2, 1, return_indices=True)[1],
         lambda x: __import__("torch").nn.functional.max_pool2d(_torch64(x), 3, 2, 1, return_indices=True)[1].numpy(),
         dtypes=FLOATS + INTS, out="int64", shape=_BWD_POOL_IN, errors=_BWD_ERRORS),
    Case("max_pool2d_backward",
         lambda g: bm._core._max_pool2d_backward(g, bm.tensor(_bwd_max_indices(), device=g.device), _BWD_POOL_IN,
                                                 3, 1, 1),
         _np_max_pool_backward, dtypes=list(FLOATS), shape=_BWD_POOL_IN, errors=_BWD_ERRORS),
    Case("avg_pool2d_backward",
         lambda g: bm._core._avg_pool2d_backward(g, _BWD_POOL_IN, 3, 2, 1, True, False),
         _np_avg_pool_backward, dtypes=list(FLOATS), shape=(2, 3, 3, 4), errors=_BWD_ERRORS),
    Case("adaptive_avg_pool2d_backward",
         lambda g: bm._core._adaptive_avg_pool2d_backward(g, _BWD_POOL_IN),
         _np_adaptive_avg_pool_backward, dtypes=list(FLOATS), shape=(2, 3, 3, 4), errors={"0d": ValueError}),
]


# ---- backward kernels (h2): torch parity over many more arguments, layouts and errors in
# test_softmax_act_backward.py, test_norm_backward.py and test_nll_backward.py ----
def _backward_cases() -> list[Case]:
    from bessemer import _core

    def softmax_bw(log):
        def ref(g, y):
            ax = None if g.ndim == 0 else -1
            s = np.sum(g if log else g * y, axis=ax, keepdims=True)
            return g - np.exp(y) * s if log else y * (g - s)
        return ref

    erf = np.vectorize(math.erf, otypes=[np.float64])
    k = math.sqrt(2 / math.pi)

    def gelu_grad(g, x):
        return g * (0.5 * (1 + erf(x / math.sqrt(2))) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi))

    def gelu_tanh_grad(g, x):
        th = np.tanh(k * (x + 0.044715 * x**3))
        return g * (0.5 * (1 + th) + 0.5 * x * (1 - th * th) * k * (1 + 3 * 0.044715 * x * x))

    def silu_grad(g, x):
        s = 1 / (1 + np.exp(-x))
        return g * s * (1 + x * (1 - s))

    def norm_bw(axes):  # grad_input of a normalisation over `axes`, no affine
        @_quiet
        def ref(g, x):
            ax = axes(x)
            xhat = (x - x.mean(axis=ax, keepdims=True)) / np.sqrt(x.var(axis=ax, keepdims=True) + 1e-5)
            rstd = 1 / np.sqrt(x.var(axis=ax, keepdims=True) + 1e-5)
            return rstd * (g - g.mean(axis=ax, keepdims=True) - xhat * (g * xhat).mean(axis=ax, keepdims=True))
        return ref

    target = np.array([0, 4, 2, 3])

    def nll_ours(x):
        g = bm.tensor(1.5, device=x.device).to(x.dtype)
        return _core._nll_loss_backward(g, x, bm.tensor(target, device=x.device), reduction="sum")

    def nll_ref(x):
        out = np.zeros(x.shape)
        if x.size:
            out[np.arange(len(target)), target] = -1.5
        return out

    no_0d = {"0d": ValueError}
    return [
        Case("softmax_backward", lambda g, y: _core._softmax_backward(g, y, -1), softmax_bw(False), nin=2,
             dtypes=list(FLOATS), domain=("any", "pos")),
        Case("log_softmax_backward", lambda g, y: _core._log_softmax_backward(g, y, -1), softmax_bw(True), nin=2,
             dtypes=list(FLOATS), domain=("any", "small")),
        Case("gelu_backward", _core._gelu_backward, gelu_grad, nin=2, dtypes=list(FLOATS)),
        Case("gelu_tanh_backward", _core._gelu_tanh_backward, gelu_tanh_grad, nin=2, dtypes=list(FLOATS)),
        Case("silu_backward", _core._silu_backward, silu_grad, nin=2, dtypes=list(FLOATS)),
        Case("relu_backward", _core._relu_backward, lambda g, y: np.where(y <= 0, 0.0, g), nin=2,
             dtypes=list(FLOATS)),
        Case("layer_norm_backward", lambda g, x: _core._layer_norm_backward(g, x, x.shape[-1:])[0],
             norm_bw(lambda x: -1), nin=2, dtypes=list(FLOATS), shape=(2, 3, 4), errors=no_0d),
        Case("batch_norm_backward", lambda g, x: _core._batch_norm_backward(g, x, training=True)[0],
             norm_bw(lambda x: (0,) + tuple(range(2, x.ndim))), nin=2, dtypes=list(FLOATS), shape=(2, 3, 4),
             errors=no_0d),
        Case("nll_loss_backward", nll_ours, nll_ref, dtypes=list(FLOATS), shape=(4, 5), errors=no_0d),
    ]


_CASES += _backward_cases()
# ---- fused optimizer steps (tests/test_optim.py compares 50-step runs with torch.optim) ----
def _optim_cases() -> list[Case]:
    from bessemer import _core

    def sgd_ours(nesterov):
        def ours(p, g, b):  # one step with an existing momentum buffer: param and buffer updated in place
            _core._sgd_step_(p, g, b, lr=0.1, momentum=0.9, dampening=0.0 if nesterov else 0.25,
                             weight_decay=0.01, nesterov=nesterov)
            return bm.stack([p, b])
        return ours

    def sgd_ref(nesterov):
        def ref(p, g, b):
            g = g + 0.01 * p
            b = 0.9 * b + (1.0 if nesterov else 0.75) * g
            return np.stack([p - 0.1 * (g + 0.9 * b if nesterov else b), b])
        return ref

    def adam_ours(amsgrad, decoupled, maximize):
        def ours(p, g, m, v, *vmax):
            step = bm.tensor(2.0, device="cpu")  # torch's state['step'] (float32, cpu): this is step 3
            _core._adam_step_(p, g, m, v, vmax[0] if amsgrad else None, step, lr=0.1, beta1=0.8, beta2=0.99,
                              eps=1e-3, weight_decay=0.05, amsgrad=amsgrad, maximize=maximize,
                              decoupled_weight_decay=decoupled)
            return bm.stack([p, m, v, *vmax])
        return ours

    def adam_ref(amsgrad, decoupled, maximize):
        def ref(p, g, m, v, *vmax):
            g = -g if maximize else g
            if decoupled:
                p = p * (1 - 0.1 * 0.05)
            else:
                g = g + 0.05 * p
            m = 0.8 * m + 0.2 * g
            v = 0.99 * v + 0.01 * g * g
            second = np.maximum(vmax[0], v) if amsgrad else v
            denom = np.sqrt(second) / np.sqrt(1 - 0.99**3) + 1e-3
            p = p - 0.1 / (1 - 0.8**3) * m / denom
            return np.stack([p, m, v] + ([second] if amsgrad else []))
        return ref

    # The "broadcast" layout makes the parameter and state share memory across elements: rejected.
    errors = {"broadcast": ValueError}
    return [
        *[Case("sgd_step", sgd_ours(n), sgd_ref(n), nin=3, dtypes=list(FLOATS), errors=errors,
               variant="nesterov" if n else "momentum_dampening") for n in (False, True)],
        Case("adam_step", adam_ours(False, False, False), adam_ref(False, False, False), nin=4, dtypes=list(FLOATS),
             domain=["any", "any", "any", "pos"], errors=errors, variant="adam_l2"),
        Case("adam_step", adam_ours(True, True, True), adam_ref(True, True, True), nin=5, dtypes=list(FLOATS),
             domain=["any", "any", "any", "pos", "pos"], errors=errors, variant="adamw_amsgrad_maximize"),
    ]


_CASES += _optim_cases()
# ---- indexing rows, floor_divide / remainder, any / all (more in test_indexing.py and
# test_floor_mod_any_all.py, against torch) ----
def _index_cases() -> list[Case]:
    sel = np.array([2, 0, 2, 1])       # rows picked along dim 0 (a 0-d input takes a single index)
    table = np.arange(20, dtype=np.float32).reshape(4, 5) / 4 - 2
    add_idx = np.array([0, 2, 0, 3, 0])  # duplicates accumulate, in index order
    copy_idx = np.array([3, 0, 1])

    def src_like(x, n, dtype=None):
        """n rows shaped like x's rows, values a function of position (bool: != 0)."""
        rows = x.shape[1:] if x.ndim else ()
        v = (np.arange(n * int(np.prod(rows, dtype=np.int64))).reshape((n, *rows)) % 7 - 3).astype(np.float64) / 2
        if dtype is None:  # numpy reference side
            return v != 0 if x.dtype == bool else (np.round(v) if x.dtype.kind in "iu" else v)
        if dtype == bm.bool:
            return bm.tensor(v != 0, device=x.device)
        return bm.tensor(np.round(v) if dtype in INTS else v, dtype=dtype, device=x.device)

    def add_ref(x):
        out = x.copy()
        src = src_like(x, len(add_idx))
        if x.dtype == bool:
            for k, i in enumerate(add_idx):
                out[i] |= src[k]
        else:
            np.add.at(out, add_idx, src)
        return out

    def copy_ref(x):
        out = x.copy()
        out[copy_idx] = src_like(x, len(copy_idx))
        return out

    def nonzero_safe(fn):
        return lambda a, b: fn(a, bm.where(b == 0, 1, b))

    def np_nonzero_safe(fn):
        return lambda a, b: fn(a, np.where(b == 0, 1, b))

    return [
        Case("index_select", lambda x: bm.index_select(x, 0, bm.tensor(sel, device=x.device)), lambda x: x[sel],
             errors={"0d": ValueError}, variant="input"),
        Case("index_select", lambda i: bm.index_select(bm.tensor(table, device=i.device), 0, i),
             lambda i: table[np.atleast_1d(i).astype(np.int64)], dtypes=[bm.int32, bm.int64], domain="exp",
             out=bm.float32,
             shapes=((6,),), variant="index"),
        Case("index_add", lambda x: bm.index_add(x, 0, bm.tensor(add_idx, device=x.device), src_like(x, 5, x.dtype)),
             add_ref, shape=(4, 3), errors={"0d": IndexError}),
        Case("index_copy", lambda x: bm.index_copy(x, 0, bm.tensor(copy_idx, device=x.device), src_like(x, 3, x.dtype)),
             copy_ref, shape=(4, 3), errors={"0d": IndexError}),
        Case("nonzero", bm.nonzero, np.argwhere, out="int64"),
        Case("floor_divide", nonzero_safe(bm.floor_divide), np_nonzero_safe(np.floor_divide), nin=2,
             dtypes=FLOATS + INTS, domain=("any", "small")),
        Case("remainder", nonzero_safe(bm.remainder), np_nonzero_safe(np.remainder), nin=2,
             dtypes=FLOATS + INTS, domain=("any", "small")),
        *_reduce_rows("any", bm.any, np.any, ALL_DTYPES, "bool"),
        *_reduce_rows("all", bm.all, np.all, ALL_DTYPES, "bool"),
    ]


_CASES += _index_cases()


def training_cases() -> list[Case]:
    return list(_CASES)
