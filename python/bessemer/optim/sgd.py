"""torch.optim.SGD: one fused kernel per parameter (bessemer._core._sgd_step_)."""

from __future__ import annotations

from .. import _core
from ._checks import check_common_flags
from .optimizer import Optimizer, _call_closure, _no_grad_step

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum (torch's defaults and formulas)."""

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False, foreach=None,
                 differentiable: bool = False, fused=None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        check_common_flags("SGD", differentiable=differentiable)
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach, "differentiable": differentiable,
                    "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    @_no_grad_step
    def step(self, closure=None):
        """One step for every parameter with a gradient (p.grad None: skipped)."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            weight_decay, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
            for p in group["params"]:
                grad = getattr(p, "grad", None)  # a Parameter has no .grad until one is assigned (pre-autograd)
                if grad is None:
                    continue
                if momentum != 0:
                    state = self.state[p]
                    state["momentum_buffer"] = _core._sgd_step_(p, grad, state.get("momentum_buffer"), lr, momentum,
                                                                dampening, weight_decay, nesterov, maximize)
                else:
                    _core._sgd_step_(p, grad, None, lr, momentum, dampening, weight_decay, nesterov, maximize)
        return loss
