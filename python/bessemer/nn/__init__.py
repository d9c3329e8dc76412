"""bessemer.nn: layers with torch's names, defaults, initialisation and state_dict keys."""

from . import functional, init
from .dropout import Dropout
from .layers import Flatten, Identity, Linear, ReLU, Sequential
from .loss import CrossEntropyLoss, NLLLoss
from .module import Module
from .parameter import Parameter
from .sparse import Embedding

__all__ = ["Module", "Parameter", "Linear", "ReLU", "Flatten", "Identity", "Sequential", "functional", "init"]
__all__ += ["Dropout", "Embedding", "CrossEntropyLoss", "NLLLoss"]
