"""bessemer.nn: layers with torch's names, defaults, initialisation and state_dict keys."""

from . import functional, init
from .layers import Flatten, Identity, Linear, ReLU, Sequential
from .module import Module
from .parameter import Parameter
from .dropout import Dropout
from .sparse import Embedding
from .loss import CrossEntropyLoss, NLLLoss

__all__ = ["Module", "Parameter", "Linear", "ReLU", "Flatten", "Identity", "Sequential", "functional", "init"]
__all__ += ["Dropout", "Embedding", "CrossEntropyLoss", "NLLLoss"]
