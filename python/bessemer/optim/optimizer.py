"""Optimizer: torch.optim.Optimizer's structure — param_groups, defaults, per-parameter state,
add_param_group's checks, zero_grad, and state_dict()/load_state_dict() in torch's format:

    {'state': {index: {'step': tensor(3.), 'exp_avg': tensor(...), ...}},
     'param_groups': [{'lr': 0.001, ..., 'params': [0, 1, 2]}]}

Subclasses implement step() by calling one fused kernel per parameter (bessemer._core._sgd_step_,
_adam_step_): nothing is read back from the device, so a step queues its launches and returns.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections import defaultdict
from copy import deepcopy
from itertools import chain
from typing import Any

from .. import _core
from .._core import Tensor

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _grad_mode(name: str):
    """bm.no_grad() / bm.enable_grad() once autograd provides them; a no-op context until then."""
    import bessemer

    ctx = getattr(bessemer, name, None)
    return ctx() if ctx is not None else contextlib.nullcontext()


def _no_grad_step(step):
    """Runs an optimizer's step under bm.no_grad() (its closure, if any, under bm.enable_grad())."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        with _grad_mode("no_grad"):
            return step(self, *args, **kwargs)

    return wrapper


def _call_closure(closure):
    if closure is None:
        return None
    with _grad_mode("enable_grad"):
        return closure()


def _typename(obj) -> str:
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


class Optimizer:
    """Base class of all optimizers; `params` is an iterable of Tensors or of dicts (param groups)."""

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a param group (a dict with 'params' and optional per-group options) to param_groups."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)

        extracted_param_tensors = []
        extracted_param_names = []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                extracted_param_names.append(param[0])
                extracted_param_tensors.append(param[1])
            else:
                extracted_param_tensors.append(param)
        param_group["params"] = extracted_param_tensors
        if len(extracted_param_names) != 0:
            if len(extracted_param_names) == len(extracted_param_tensors):
                param_group["param_names"] = extracted_param_names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                getattr(param, "is_leaf", True) or getattr(param, "retains_grad", False)
            ):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)

        param_set: set[int] = set()
        for group in self.param_groups:
            param_set.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current_group_txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current_group_txt} to the optimizer")
        if not param_set.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients: None (default), or zeros in place with set_to_none=False."""
        if not set_to_none:  # refuse a read-only gradient before zeroing any
            for group in self.param_groups:
                for p in group["params"]:
                    if getattr(p, "grad", None) is not None:
                        p.grad._check_writable("zero_grad")
        for group in self.param_groups:
            for p in group["params"]:
                g = getattr(p, "grad", None)
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                zero_ = getattr(g, "zero_", None)
                if zero_ is not None:
                    zero_()
                else:
                    _core.copy_(g, _core.full([], 0, g.dtype, g.device))

    def step(self, closure=None):
        raise NotImplementedError

    # ---- state_dict ----
    def state_dict(self) -> dict[str, Any]:
        """{'state': {index: per-parameter state}, 'param_groups': [group options + 'params': indices]}.

        As in torch, the state tensors are the optimizer's own (not copies)."""
        param_mappings: dict[int, int] = {}
        start_index = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    @staticmethod
    def _process_value_according_to_param_policy(param: Tensor, value: Tensor, key=None) -> Tensor:
        # 'step' is a cpu count (as torch, even when a checkpoint was loaded with map_location);
        # floating state follows the parameter's dtype and device, other tensors its device.
        if key == "step":
            return value.to("cpu")
        if param.dtype.is_floating_point:
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state_dict() of an optimizer with the same parameter groups' sizes."""
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def _cast(param, value, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(param, value, key)
            if isinstance(value, dict):
                return {k: _cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(_cast(param, v) for v in value)
            return value

        state: defaultdict[Tensor, dict[Any, Any]] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v)
            else:
                state[k] = v

        def update_group(group: dict[str, Any], new_group: dict[str, Any]) -> dict[str, Any]:
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
