"""ResNet-18 (He et al. 2015) with torchvision's module names, so torchvision state_dicts load as is."""

from __future__ import annotations

from .. import nn
from .._core import Tensor


def conv3x3(in_planes: int, out_planes: int, stride: int = 1, device=None, dtype=None) -> nn.Conv2d:
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False, device=device,
                     dtype=dtype)


def conv1x1(in_planes: int, out_planes: int, stride: int = 1, device=None, dtype=None) -> nn.Conv2d:
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False, device=device, dtype=dtype)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None,
                 device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.conv1 = conv3x3(inplanes, planes, stride, **kw)
        self.bn1 = nn.BatchNorm2d(planes, **kw)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes, **kw)
        self.bn2 = nn.BatchNorm2d(planes, **kw)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class ResNet(nn.Module):
    def __init__(self, layers: list[int], num_classes: int = 1000, zero_init_residual: bool = False, device=None,
                 dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self._kw = kw
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False, **kw)
        self.bn1 = nn.BatchNorm2d(64, **kw)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1], stride=2)
        self.layer3 = self._make_layer(256, layers[2], stride=2)
        self.layer4 = self._make_layer(512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes, **kw)
        # torchvision's initialisation
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, BasicBlock):
                    nn.init.zeros_(m.bn2.weight)

    def _make_layer(self, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes, stride, **self._kw),
                                       nn.BatchNorm2d(planes, **self._kw))
        layers = [BasicBlock(self.inplanes, planes, stride, downsample, **self._kw)]
        self.inplanes = planes
        for _ in range(1, blocks):
            layers.append(BasicBlock(self.inplanes, planes, **self._kw))
        return nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.avgpool(x).flatten(1)
        return self.fc(x)


def resnet18(num_classes: int = 1000, device=None, dtype=None) -> ResNet:
    """ResNet-18 with random (torchvision-style) initial weights; load trained ones with
    model.load_state_dict(bm.load_file("resnet18.safetensors"))."""
    return ResNet([2, 2, 2, 2], num_classes=num_classes, device=device, dtype=dtype)
