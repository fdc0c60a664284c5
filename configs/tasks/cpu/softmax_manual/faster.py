import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Fusion: the library's one-pass softmax kernel."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)
