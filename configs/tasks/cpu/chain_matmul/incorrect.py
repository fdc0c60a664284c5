import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Bug: drops the last row of the inner product."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B, C):
        return A[:, :-1] @ (B[:-1] @ C)
