"""bessemer.autograd: reverse-mode differentiation with torch's names and meanings.

The tape and the engine are C++ (csrc/autograd/); this module holds grad mode's context managers,
the functional entry points, custom Functions (function.py) and gradcheck. Every op records a node
when grad mode is on and an input requires grad; ``Tensor.backward()`` or ``autograd.grad()`` runs the recorded graph.
"""

from __future__ import annotations

from .. import _core
from ._grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .function import Function, FunctionCtx
from .gradcheck import gradcheck, gradgradcheck

__all__ = ["backward", "grad", "Function", "FunctionCtx",
           "gradcheck", "gradgradcheck", "no_grad", "enable_grad", "set_grad_enabled",
           "is_grad_enabled", "inference_mode", "queue_callback"]


def queue_callback(callback) -> None:
    """Runs ``callback()`` once the backward pass now running has finished: after every ``.grad`` is
    written and every post-accumulate hook has run (torch's
    ``Variable._execution_engine.queue_callback``). Call it from a hook; outside a backward pass it is an
    error. DistributedDataParallel waits for its last all-reduce here."""
    if not callable(callback):
        raise TypeError(f"[queue_callback] the callback must be callable, got {type(callback).__name__}")
    _core._queue_backward_callback(callback)


def _as_list(x):
    if x is None:
        return None
    if isinstance(x, _core.Tensor):
        return [x]
    return list(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False, inputs=None) -> None:
    """Accumulates the gradients of ``tensors`` into the .grad of the leaves (or only of ``inputs``)."""
    tensors = _as_list(tensors)
    grads = _as_list(grad_tensors) or [None] * len(tensors)
    if len(grads) != len(tensors):
        raise ValueError(f"[backward] got {len(grads)} gradients for {len(tensors)} tensors")
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _as_list(inputs)
    if inputs is not None and len(inputs) == 0:
        raise ValueError("[backward] inputs must be a non-empty sequence of tensors when given")
    _core._run_backward(tensors, grads, bool(retain_graph), bool(create_graph), inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused=None, materialize_grads: bool = False):
    """The gradients of ``outputs`` with respect to ``inputs`` (a tuple, one per input). Leaves'
    .grad are not touched. Unused inputs give None with allow_unused=True (zeros with
    materialize_grads=True) and an error otherwise."""
    outputs = _as_list(outputs)
    inputs = _as_list(inputs)
    grads = _as_list(grad_outputs) or [None] * len(outputs)
    if len(grads) != len(outputs):
        raise ValueError(f"[grad] got {len(grads)} grad_outputs for {len(outputs)} outputs")
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    result = _core._run_grad(outputs, grads, inputs, bool(retain_graph), bool(create_graph), bool(allow_unused))
    if materialize_grads:
        result = tuple(g if g is not None else _core.full(list(x.shape), 0, x.dtype, x.device)
                       for g, x in zip(result, inputs))
    return result
