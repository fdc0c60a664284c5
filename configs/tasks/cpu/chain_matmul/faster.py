import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Algebraic rewrite: reassociate to A @ (B @ C), a K x K middle product."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B, C):
        return A @ (B @ C)
