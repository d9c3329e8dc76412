"""Custom differentiable functions: torch.autograd.Function's names and meanings.

    class Exp(bm.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)

``forward`` runs with gradient recording off and returns one tensor; ``backward`` gets that output's
gradient and returns one gradient (or None) per argument of ``forward``. The node joins the graph
like any op's: hooks, ``retain_graph``, ``bm.autograd.grad`` and, when ``backward`` is written with
differentiable ops, ``create_graph=True`` (double backward) all work through it.
"""

from __future__ import annotations

from .. import _core
from .._core import Tensor
from ._grad_mode import no_grad

__all__ = ["Function", "FunctionCtx"]


class FunctionCtx:
    """What ``forward`` and ``backward`` share: tensors saved with ``save_for_backward`` (checked
    against in-place writes when read back), ``needs_input_grad``, and any attribute you set."""

    def __init__(self, name: str, needs_input_grad: tuple[bool, ...]):
        self._name = name
        self.needs_input_grad = needs_input_grad
        self._saved: tuple | None = None
        self._versions: tuple = ()

    def save_for_backward(self, *tensors) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"[{self._name}] save_for_backward takes tensors or None, argument {i} is "
                                f"{type(t).__name__}")
        self._saved = tensors
        self._versions = tuple(None if t is None else t._version for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:
            return ()
        for i, (t, v) in enumerate(zip(self._saved, self._versions)):
            if t is not None and t._version != v:
                raise RuntimeError(
                    f"[{self._name}] saved tensor {i} (shape {tuple(t.shape)}) was modified by an in-place operation "
                    f"after save_for_backward (its version is {t._version}, it was saved at version {v})")
        return self._saved


class Function:
    """Subclass it with static ``forward(ctx, *args)`` and ``backward(ctx, grad)``; call ``apply``."""

    @staticmethod
    def forward(ctx: FunctionCtx, *args):
        raise NotImplementedError("subclasses of bessemer.autograd.Function define forward(ctx, *args)")

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Tensor):
        raise NotImplementedError("subclasses of bessemer.autograd.Function define backward(ctx, grad)")

    @classmethod
    def apply(cls, *args):
        name = f"{cls.__name__}Backward"
        recording = _core.is_grad_enabled()
        needs = tuple(recording and isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx = FunctionCtx(name, needs)
        with no_grad():
            out = cls.forward(ctx, *args)
        if not any(needs):
            return out
        if not isinstance(out, Tensor):
            raise TypeError(f"[{name}] forward must return one tensor to be differentiated, it returned "
                            f"{type(out).__name__} (bessemer's Function records a single output)")
        # A fresh tensor object for the node's output (sharing memory): forward may have returned one
        # of its inputs, whose own history must stay as it is.
        result = out.detach()
        # The closure keeps which arguments were tensors, not the arguments: an input is kept alive
        # only when forward saved it.
        is_tensor = tuple(isinstance(a, Tensor) for a in args)
        positions = [i for i, t in enumerate(is_tensor) if t]
        n_args = len(args)

        def backward(grad: Tensor) -> list:
            grads = cls.backward(ctx, grad)
            if not isinstance(grads, tuple):
                grads = (grads,)
            if len(grads) > n_args and all(g is None for g in grads[n_args:]):
                grads = grads[:n_args]
            if len(grads) != n_args:
                raise RuntimeError(f"[{name}] backward returned {len(grads)} gradient(s), but forward took {n_args} "
                                   "argument(s): return one gradient (or None) per argument")
            for i, g in enumerate(grads):
                if g is None:
                    continue
                if not isinstance(g, Tensor):
                    raise TypeError(f"[{name}] backward returned {type(g).__name__} as the gradient of argument {i}; "
                                    "expected a tensor or None")
                if not is_tensor[i]:
                    raise RuntimeError(f"[{name}] backward returned a gradient for argument {i}, which is not a "
                                       "tensor: return None there")
            return [grads[i] if needs[i] else None for i in positions]

        _core._record_function(name, [args[i] for i in positions], result, backward)
        return result
