import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Skipped work: scaling rows is diag(A) @ B without the N x N matrix."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return A.unsqueeze(1) * B
