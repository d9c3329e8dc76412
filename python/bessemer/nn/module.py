"""Module: parameters, buffers, submodules, state_dict, device moves, train/eval (torch semantics)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator

from .. import _core
from .._core import Tensor
from ..autograd import no_grad as _no_grad
from .parameter import Parameter


class Module:
    """Base class of layers. Assigning a Parameter, a Module or (via register_buffer) a Tensor to an
    attribute registers it, so parameters(), state_dict() and to() find it."""

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # ---- registration ----
    def __setattr__(self, name: str, value) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"[{type(self).__name__}] call super().__init__() before assigning attributes")
        if isinstance(value, (Parameter, Module)):
            target = self._parameters if isinstance(value, Parameter) else self._modules
            for d in (self._parameters, self._buffers, self._modules):
                if d is not target:
                    d.pop(name, None)
            self.__dict__.pop(name, None)
            target[name] = value  # a replaced entry keeps its place (a Sequential's order), as torch's
        elif name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"[{type(self).__name__}] buffer '{name}' must be a Tensor or None")
            self._buffers[name] = value
        elif name in self._parameters or name in self._modules:
            if value is not None:
                kind = "parameter" if name in self._parameters else "submodule"
                raise TypeError(f"[{type(self).__name__}] cannot assign {type(value).__name__} to {kind} '{name}'")
            (self._parameters if name in self._parameters else self._modules)[name] = None
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            if key in d and name in d[key]:
                return d[key][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for d in (self._parameters, self._buffers, self._modules):
            if name in d:
                del d[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if param is None:
            self._parameters[name] = None
        else:
            setattr(self, name, param)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"[register_buffer] '{name}' must be a Tensor or None")
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        if not persistent:
            self._non_persistent.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        self._modules[name] = module

    # ---- traversal ----
    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        for name, m in self._modules.items():
            if m is not None:
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        seen = set()
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mp, m in mods:
            for name, p in m._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mp}.{name}" if mp else name), p

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Tensor]]:
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mp, m in mods:
            for name, b in m._buffers.items():
                if b is not None:
                    yield (f"{mp}.{name}" if mp else name), b

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- state ----
    def state_dict(self) -> OrderedDict:
        """Parameters and persistent buffers by dotted name (torchvision key names)."""
        out = OrderedDict()
        for mp, m in self.named_modules():
            for name, p in m._parameters.items():
                if p is not None:
                    out[f"{mp}.{name}" if mp else name] = p
            for name, b in m._buffers.items():
                if b is not None and name not in m._non_persistent:
                    out[f"{mp}.{name}" if mp else name] = b
        return out

    def load_state_dict(self, state_dict, strict: bool = True):
        """Copy values into this module's tensors (on their devices, in their dtypes).

        Shape mismatches are always errors; with strict=True, missing and unexpected keys too.
        Returns (missing_keys, unexpected_keys). Nothing is modified if any check fails.
        """
        own = self.state_dict()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        problems = []
        for k, v in state_dict.items():
            if k in own:
                if not isinstance(v, Tensor):
                    problems.append(f"'{k}': expected a Tensor, got {type(v).__name__}")
                elif tuple(v.shape) != tuple(own[k].shape):
                    problems.append(f"'{k}': checkpoint shape {tuple(v.shape)}, model shape {tuple(own[k].shape)}")
                elif own[k].is_readonly:
                    problems.append(f"'{k}': the model's tensor is read-only (its memory belongs to a read-only "
                                    "NumPy array)")
        if strict:
            if missing:
                problems.append("missing keys: " + ", ".join(missing))
            if unexpected:
                problems.append("unexpected keys: " + ", ".join(unexpected))
        if problems:
            raise ValueError(f"[load_state_dict] {type(self).__name__}: " + "; ".join(problems))
        with _no_grad():
            for k, v in state_dict.items():
                if k in own:
                    dst = own[k]
                    _core.copy_(dst, v.to(dst.device).to(dst.dtype))
        return missing, unexpected

    # ---- devices, dtypes, modes ----
    def _apply(self, fn) -> Module:
        with _no_grad():
            return self._apply_no_grad(fn)

    def _apply_no_grad(self, fn) -> Module:
        for m in self.modules():
            for name, p in m._parameters.items():
                if p is not None:
                    m._parameters[name] = Parameter(fn(p), requires_grad=getattr(p, "requires_grad", True))
            for name, b in m._buffers.items():
                if b is not None:
                    m._buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Move every parameter and buffer: m.to(device), m.to(dtype), m.to(device, dtype).
        dtype changes apply to floating point tensors only, as in torch."""
        def convert(t: Tensor) -> Tensor:
            dtype = kwargs.get("dtype")
            device = kwargs.get("device")
            for a in args:
                if isinstance(a, _core.dtype):
                    dtype = a
                else:
                    device = a
            if dtype is not None and not t.dtype.is_floating_point:
                dtype = None
            return t.to(device=device, dtype=dtype)
        return self._apply(convert)

    def cpu(self) -> Module:
        return self.to("cpu")

    def float(self) -> Module:
        return self.to(_core.dtype.float32)

    def half(self) -> Module:
        return self.to(_core.dtype.float16)

    def train(self, mode: bool = True) -> Module:
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients of every parameter: to None (the default, as torch), or to zeros."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    p.grad = g.detach()
                with _no_grad():
                    p.grad.zero_()

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Sets requires_grad on every parameter (freezing or unfreezing the module)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def apply(self, fn) -> Module:
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- calling ----
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"[{type(self).__name__}] subclasses of Module must define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"
