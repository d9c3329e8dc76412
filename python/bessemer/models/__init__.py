"""Model definitions with torchvision's state_dict key names."""

from .resnet import BasicBlock, ResNet, resnet18

__all__ = ["BasicBlock", "ResNet", "resnet18"]
