"""gradcheck / gradgradcheck: analytical gradients against central finite differences (torch's
meaning). Use float64 inputs (CPU) for meaningful tolerances."""

from __future__ import annotations

import numpy as np

from .. import _core
from ._grad_mode import no_grad

Tensor = _core.Tensor


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical Jacobians differ."""


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(func, inputs):
    return [o for o in _tuple(func(*inputs)) if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _with_values(t: Tensor, values: np.ndarray, like_grad: bool = False) -> Tensor:
    out = _core._from_numpy_copy(np.array(values, order="C"), t.device)  # (ascontiguousarray makes 0-d 1-d)
    out = out if out.dtype == t.dtype else out.to(t.dtype)
    return out.requires_grad_() if like_grad and t.requires_grad else out


def _numerical(func, inputs, wrt, eps):
    """J[k][out j, in i] for each input index k in wrt, by central differences."""
    base = list(inputs)  # func may differentiate internally (gradgradcheck): keep requires_grad
    outs = _outputs(func, base)
    jac = []
    for k in wrt:
        x = inputs[k]
        arr = np.asarray(x.detach().to("cpu").numpy(), dtype=np.float64)
        cols = []
        flat = arr.reshape(-1)
        for i in range(flat.size):
            vals = []
            for sign in (1.0, -1.0):
                pert = flat.copy()
                pert[i] += sign * eps
                args = list(base)
                args[k] = _with_values(x, pert.reshape(arr.shape), like_grad=True)
                vals.append([np.asarray(o.detach().to("cpu").numpy(), dtype=np.float64).reshape(-1)
                             for o in _outputs(func, args)])
            cols.append([(p - m) / (2 * eps) for p, m in zip(vals[0], vals[1])])
        # per output: (n_out, n_in)
        jac.append([np.stack([c[j] for c in cols], axis=1) if cols else np.zeros((o.numel(), 0))
                    for j, o in enumerate(outs)])
    return jac


def _analytical(func, inputs, wrt):
    from . import grad as autograd_grad

    outs = _outputs(func, inputs)
    jac = [[np.zeros((o.numel(), inputs[k].numel())) for o in outs] for k in wrt]
    for j, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for r in range(o.numel()):
            onehot = np.zeros(o.numel())
            onehot[r] = 1.0
            go = _with_values(o, onehot.reshape(tuple(o.shape)))
            gs = autograd_grad([o], [inputs[k] for k in wrt], [go], retain_graph=True, allow_unused=True)
            for n, g in enumerate(gs):
                if g is not None:
                    jac[n][j][r] = np.asarray(g.to("cpu").to(_core.dtype.float64).numpy()).reshape(-1)
    return jac


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, **_ignored) -> bool:
    """True when func's gradients with respect to every input that requires grad match central
    differences within atol + rtol * |numerical|; otherwise raises GradcheckError (or returns False)."""
    inputs = _tuple(inputs)
    wrt = [k for k, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not wrt:
        raise ValueError("[gradcheck] at least one input must be a tensor that requires grad")
    num = _numerical(func, inputs, wrt, eps)
    ana = _analytical(func, inputs, wrt)
    for n, k in enumerate(wrt):
        for j, (a, b) in enumerate(zip(ana[n], num[n])):
            if not np.allclose(a, b, rtol=rtol, atol=atol):
                msg = (f"[gradcheck] Jacobian mismatch for output {j} with respect to input {k}:\n"
                       f"analytical:\n{a}\nnumerical:\n{b}\nmax abs difference {np.max(np.abs(a - b))}")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True, **_ignored) -> bool:
    """gradcheck of the gradient: checks second derivatives (the backward recorded with create_graph)."""
    from . import grad as autograd_grad

    inputs = _tuple(inputs)
    wrt = [k for k, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    with no_grad():
        outs = _outputs(func, [x.detach() if isinstance(x, Tensor) else x for x in inputs])
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = [_with_values(o, rng.standard_normal(tuple(o.shape))).requires_grad_() for o in outs]
    grad_outputs = list(_tuple(grad_outputs))
    n_in = len(inputs)

    def first_derivative(*args):
        xs, gos = args[:n_in], args[n_in:]
        outs = _outputs(func, xs)
        gs = autograd_grad(outs, [xs[k] for k in wrt], list(gos), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
