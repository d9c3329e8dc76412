"""bessemer.nn: layers with torch's names, defaults, initialisation and state_dict keys."""

from . import functional, init, utils
from .activation import GELU, SiLU
from .conv import Conv2d
from .dropout import Dropout
from .layers import Flatten, Identity, Linear, ReLU, Sequential
from .loss import CrossEntropyLoss, NLLLoss
from .module import Module
from .normalization import BatchNorm2d, LayerNorm
from .parameter import Parameter
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .sparse import Embedding
from .sync_batchnorm import SyncBatchNorm

__all__ = [
    "Module", "Parameter", "functional", "init", "utils",
    "Linear", "Conv2d", "ReLU", "GELU", "SiLU", "Flatten", "Identity", "Sequential", "Dropout", "Embedding",
    "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm2d", "SyncBatchNorm", "LayerNorm",
    "CrossEntropyLoss", "NLLLoss",
]
