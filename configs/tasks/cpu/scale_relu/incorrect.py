import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Bug: folds 2 * 3 into 5."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x) * 5.0 + 1.0
