import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Identity candidate: the reference's own code."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.diag(A) @ B
