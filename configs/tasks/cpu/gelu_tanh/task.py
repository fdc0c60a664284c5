import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """GELU, tanh approximation, as a chain of elementwise operations."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return []
