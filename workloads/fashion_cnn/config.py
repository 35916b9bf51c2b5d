"""Residual CNN configuration and its analytic FLOP model; torch-free."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResNetConfig:
    widths: tuple[int, ...]
    num_classes: int = 10
    in_channels: int = 1
    image_size: int = 28


def forward_flops(cfg: ResNetConfig) -> float:
    """Multiply-add FLOPs (2 per MAC) of convolutions and the classifier for one image.

    BatchNorm, ReLU, pooling and the residual adds are not counted (a few % of the convs).
    """
    flops, side, c_in = 0.0, cfg.image_size, cfg.in_channels
    for i, c in enumerate(cfg.widths):
        flops += 2 * c_in * c * 9 * side * side          # stage conv, before pooling
        if i > 0:
            side //= 2
        flops += 2 * (2 * c * c * 9 * side * side)       # the residual block's two convs
        c_in = c
    return flops + 2 * c_in * cfg.num_classes


def train_flops_per_image(cfg: ResNetConfig) -> float:
    """Training FLOPs per image: 3 × forward (backward = gradients of inputs and of weights)."""
    return 3 * forward_flops(cfg)
