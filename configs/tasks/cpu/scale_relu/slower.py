import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Element by element over rows: correct, much slower."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.stack([torch.relu(row) * 2.0 * 3.0 + 1.0 for row in x])
