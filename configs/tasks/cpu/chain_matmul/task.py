import torch
import torch.nn as nn


class Model(nn.Module):
    """(A @ B) @ C with a thin inner dimension: the order wastes work."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B, C):
        return (A @ B) @ C


N = 512
K = 16


def get_inputs():
    return [torch.randn(N, K), torch.randn(K, N), torch.randn(N, K)]


def get_init_inputs():
    return []
