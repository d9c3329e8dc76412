"""Loaded at interpreter start by tools/sanitize.sh (its directory is on PYTHONPATH): numpy and torch
keep the objects they build at import (ufunc loops and promoters, datetime C API, op registries)
until exit on purpose. LeakSanitizer would report them, and the interpreter's frames carry no frame
pointers, so their stacks stop at the CPython allocator and cannot be told apart from a leak of ours
by a suppression. Instead LeakSanitizer ignores what is allocated on this thread while numpy or torch
is first imported, and nothing else: our code never runs inside those imports."""

import builtins
import ctypes

_lsan = ctypes.CDLL(None)  # the preloaded ASan runtime exports __lsan_disable / __lsan_enable
_original_import = builtins.__import__
_pending = {"numpy", "torch"}


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    top = name.partition(".")[0]
    if level != 0 or top not in _pending:
        return _original_import(name, globals, locals, fromlist, level)
    _pending.discard(top)
    if not _pending:
        builtins.__import__ = _original_import
    _lsan.__lsan_disable()
    try:
        return _original_import(name, globals, locals, fromlist, level)
    finally:
        _lsan.__lsan_enable()


builtins.__import__ = _import
