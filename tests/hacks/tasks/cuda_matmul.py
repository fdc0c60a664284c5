"""A GPU task for the CUDA hack catalogue: one float32 matmul big enough
(2048^3) that where its work runs shows in the timing."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return A @ B


N = 2048


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
