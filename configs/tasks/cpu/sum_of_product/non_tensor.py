import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Returns a Python float, not a tensor."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return float(torch.dot(A.sum(dim=0), B.sum(dim=1)))
