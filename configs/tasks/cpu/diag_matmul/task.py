import torch
import torch.nn as nn


class Model(nn.Module):
    """C = diag(A) @ B, as KernelBench level 1 problem 12, sized for one CPU core."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.diag(A) @ B


N = 32
M = 2048


def get_inputs():
    return [torch.randn(N), torch.randn(N, M)]


def get_init_inputs():
    return []
