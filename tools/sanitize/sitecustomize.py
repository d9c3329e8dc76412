"""Loaded at interpreter start by tools/sanitize.sh (its directory is on PYTHONPATH).

Third-party packages and the standard library keep what they build while they are imported
(numpy's ufunc loops and promoters, its datetime C API, torch's and scipy's registries, interned
strings) until the process ends, on purpose. LeakSanitizer would report them, and the interpreter's
frames carry no frame pointers, so their stacks stop at CPython's allocator and no suppression can
tell them from a reference our bindings forgot to drop. Instead LeakSanitizer ignores what is
allocated on the importing thread during the first import of a top-level module that lives outside
this repository. bessemer itself, the tests and the examples are inside it and stay checked; our
code never runs inside a third-party import.
"""

import builtins
import ctypes
import importlib.util
import os
import sys

_lsan = ctypes.CDLL(None)  # the preloaded ASan runtime exports __lsan_disable / __lsan_enable
_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_original_import = builtins.__import__
_decided = set()


def _outside_repo(top):
    if top in _decided or top in sys.modules:
        return False
    _decided.add(top)
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    where = spec.origin or next(iter(spec.submodule_search_locations or []), "") or ""
    if where in ("built-in", "frozen"):
        return True
    return not os.path.abspath(where).startswith(_root + os.sep)


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if level != 0 or not _outside_repo(name.partition(".")[0]):
        return _original_import(name, globals, locals, fromlist, level)
    _lsan.__lsan_disable()
    try:
        return _original_import(name, globals, locals, fromlist, level)
    finally:
        _lsan.__lsan_enable()


if hasattr(_lsan, "__lsan_disable"):  # only in an interpreter started with the runtime preloaded
    builtins.__import__ = _import
