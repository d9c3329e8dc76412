"""bessemer.utils: data loading (bessemer.utils.data)."""

from . import data

__all__ = ["data"]
