import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Sums the product and its transpose's transpose: twice the work, correct."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        first = (A @ B).sum()
        second = (B.t() @ A.t()).sum()
        return (first + second) * 0.5
