import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Same result through a float64 matmul: correct, slower."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return (torch.diag(A.double()) @ B.double()).float()
