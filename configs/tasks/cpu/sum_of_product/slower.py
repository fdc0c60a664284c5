import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Row by row products: correct, slower."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        total = torch.zeros((), dtype=A.dtype)
        for row in A:
            total = total + (row @ B).sum()
        return total
