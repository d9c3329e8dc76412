"""bessemer.nn: layers with torch's names, defaults, initialisation and state_dict keys."""

from . import functional, init
from .layers import Flatten, Identity, Linear, ReLU, Sequential
from .module import Module
from .parameter import Parameter
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d

__all__ = ["Module", "Parameter", "Linear", "ReLU", "Flatten", "Identity", "Sequential", "functional", "init"]
__all__ += ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]

from .activation import GELU, SiLU  # noqa: E402
from .normalization import BatchNorm2d, LayerNorm  # noqa: E402

__all__ += ["BatchNorm2d", "LayerNorm", "GELU", "SiLU"]
