import math

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Evaluates the formula twice and averages: correct, slower."""

    def __init__(self):
        super().__init__()

    def gelu(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

    def forward(self, x):
        return (self.gelu(x) + self.gelu(x)) * 0.5
