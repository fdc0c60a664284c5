import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Bug: sums the elementwise product instead of the matrix product."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return (A * B).sum()
