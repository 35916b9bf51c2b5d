"""A small residual CNN for 28×28 single-channel images (ResNet-style, three stages).

Each stage is a 3×3 conv + BatchNorm + ReLU (the first stage's is the stem; later ones are
followed by 2×2 max-pooling) and one residual block of two 3×3 convs. Global average pooling and
a linear classifier end it.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from workloads.fashion_cnn.config import ResNetConfig


def conv_bn(c_in: int, c_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out),
                         nn.ReLU(inplace=True))


class Residual(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.conv1 = conv_bn(c, c)
        self.conv2 = nn.Sequential(nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x + self.conv2(self.conv1(x)))


class ResNet(nn.Module):
    """``forward(images)`` returns class logits."""

    def __init__(self, cfg: ResNetConfig):
        super().__init__()
        layers: list[nn.Module] = []
        c_in = cfg.in_channels
        for i, c in enumerate(cfg.widths):
            layers.append(conv_bn(c_in, c))
            if i > 0:
                layers.append(nn.MaxPool2d(2))
            layers.append(Residual(c))
            c_in = c
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(c_in, cfg.num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).mean(dim=(2, 3)))


