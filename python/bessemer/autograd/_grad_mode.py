"""Grad mode: per thread, as in torch. Each class is a context manager and a decorator."""

from __future__ import annotations

import functools

from .. import _core

is_grad_enabled = _core.is_grad_enabled


class _GradModeContext:
    _mode: bool

    def __enter__(self):
        self._prev = _core.is_grad_enabled()
        _core._set_grad_enabled(self._mode)
        return self

    def __exit__(self, *exc) -> None:
        _core._set_grad_enabled(self._prev)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):  # noqa: N801  (torch's name)
    """Ops inside record nothing: their results do not require grad."""

    _mode = False


class enable_grad(_GradModeContext):  # noqa: N801
    """Turns recording back on inside no_grad."""

    _mode = True


class inference_mode(no_grad):  # noqa: N801
    """As no_grad (bessemer has no separate inference tensors)."""

    def __init__(self, mode: bool = True):
        self._mode = not mode

    def __call__(self, fn):
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper


class set_grad_enabled(_GradModeContext):  # noqa: N801
    """set_grad_enabled(False) switches grad mode at once (a function call, as in torch) and restores
    the previous mode when used as a context manager."""

    def __init__(self, mode: bool):
        self._prev = _core.is_grad_enabled()
        self._mode = bool(mode)
        _core._set_grad_enabled(self._mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        _core._set_grad_enabled(self._prev)

    def __call__(self, fn):
        mode = self._mode
        _core._set_grad_enabled(self._prev)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper
