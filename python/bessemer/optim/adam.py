"""torch.optim.Adam and AdamW: one fused kernel per parameter (bessemer._core._adam_step_)."""

from __future__ import annotations

from .. import _core
from .._core import Tensor
from ._checks import check_common_flags
from .optimizer import Optimizer, _call_closure, _no_grad_step

__all__ = ["Adam", "AdamW"]


def _zeros_like(p: Tensor) -> Tensor:
    return _core.full(list(p.shape), 0, p.dtype, p.device)


def _new_step(value: float = 0.0) -> Tensor:
    """torch's state['step']: a 0-d float32 tensor on the cpu."""
    return _core.full([], float(value), _core.dtype.float32, "cpu")


class Adam(Optimizer):
    """Adam (decoupled_weight_decay=True: AdamW), with torch's defaults, checks and formulas."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False, fused=None,
                 decoupled_weight_decay: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        check_common_flags(type(self).__name__, differentiable=differentiable, capturable=capturable)
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = _new_step(float(p_state["step"]))

    def _state_of(self, p: Tensor, amsgrad: bool) -> dict:
        state = self.state[p]
        if len(state) == 0:  # lazy initialisation, as torch
            state["step"] = _new_step()
            state["exp_avg"] = _zeros_like(p)
            state["exp_avg_sq"] = _zeros_like(p)
            if amsgrad:
                state["max_exp_avg_sq"] = _zeros_like(p)
        elif amsgrad and "max_exp_avg_sq" not in state:
            raise KeyError("max_exp_avg_sq")
        return state

    @_no_grad_step
    def step(self, closure=None):
        """One step for every parameter with a gradient (p.grad None: skipped)."""
        loss = _call_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            amsgrad, maximize, decoupled = group["amsgrad"], group["maximize"], group["decoupled_weight_decay"]
            for p in group["params"]:
                grad = getattr(p, "grad", None)  # a Parameter has no .grad until one is assigned (pre-autograd)
                if grad is None:
                    continue
                state = self._state_of(p, amsgrad)
                _core._adam_step_(p, grad, state["exp_avg"], state["exp_avg_sq"], state.get("max_exp_avg_sq"),
                                  state["step"], lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled)
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (torch's AdamW, weight_decay=1e-2 by default)."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False, foreach=None,
                 capturable: bool = False, differentiable: bool = False, fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
