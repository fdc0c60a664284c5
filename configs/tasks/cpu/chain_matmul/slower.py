import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Computes the product twice and averages: correct, slower."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B, C):
        first = (A @ B) @ C
        second = (A @ B) @ C
        return (first + second) * 0.5
