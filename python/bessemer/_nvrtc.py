"""Finds NVRTC for the CUDA target (docs/cuda.md).

csrc/cuda/nvrtc.cpp opens NVRTC with dlopen: $BESSEMER_NVRTC first, then the sonames
libnvrtc.so.13, .so.12, .so. A wheel's copy (pip install nvidia-cuda-nvrtc) is not on the loader's
path, so preload() loads it, and the libnvrtc-builtins beside it (which NVRTC opens by soname
itself), with RTLD_GLOBAL: dlopen by soname then finds the copy already loaded.
Call preload() before the first compile; the compile bindings do.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import os

_loaded: str | None = None
_tried = False

# (directory inside the `nvidia` namespace package, library) per CUDA major version, newest first.
_WHEEL_LIBS = (("cu13/lib", "libnvrtc.so.13"), ("cuda_nvrtc/lib", "libnvrtc.so.12"))


def _nvidia_dirs() -> list[str]:
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    return list(spec.submodule_search_locations)


def find() -> str | None:
    """Path of the libnvrtc of an installed nvidia-cuda-nvrtc wheel, or None."""
    for base in _nvidia_dirs():
        for sub, lib in _WHEEL_LIBS:
            path = os.path.join(base, sub, lib)
            if os.path.isfile(path):
                return path
    return None


def preload() -> str | None:
    """Loads the wheel's NVRTC (once) unless BESSEMER_NVRTC names one; returns its path or None."""
    global _loaded, _tried
    if _tried or os.environ.get("BESSEMER_NVRTC"):
        return _loaded
    _tried = True
    path = find()
    if path is None:
        return None
    try:
        for builtins in sorted(glob.glob(os.path.join(os.path.dirname(path), "libnvrtc-builtins.so.*"))):
            if ".alt." not in builtins:
                ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError:
        return None
    _loaded = path
    return path
