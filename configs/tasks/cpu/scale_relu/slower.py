import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Computes the result twice and averages: correct, slower."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        a = torch.relu(x) * 2.0 * 3.0 + 1.0
        b = torch.relu(x) * 2.0 * 3.0 + 1.0
        return (a + b) * 0.5
