"""bessemer.optim: torch.optim's SGD, Adam and AdamW (names, defaults, checks, state_dict format),
each step one fused kernel per parameter; lr_scheduler holds the learning-rate schedules."""

from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler"]
