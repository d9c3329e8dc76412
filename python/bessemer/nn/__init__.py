"""bessemer.nn: layers with torch's names, defaults, initialisation and state_dict keys."""

from . import functional, init
from .conv import Conv2d
from .layers import Flatten, Identity, Linear, ReLU, Sequential
from .module import Module
from .parameter import Parameter

__all__ = ["Module", "Parameter", "Linear", "ReLU", "Flatten", "Identity", "Sequential", "functional", "init"]
__all__ += ["Conv2d"]
