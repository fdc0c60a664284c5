import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Algebraic rewrite: 1'(AB)1 = (1'A)(B1), no matrix product."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.dot(A.sum(dim=0), B.sum(dim=1))
