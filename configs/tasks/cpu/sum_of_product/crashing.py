import ctypes

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Writes through a wild pointer."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        ctypes.memset(16, 0, 64)
        return torch.dot(A.sum(dim=0), B.sum(dim=1))
