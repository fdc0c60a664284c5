import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Bug: an off-by-one drops the last row of the product."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return (A[:-1] @ B).sum()
