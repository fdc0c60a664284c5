import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Exp without the max shift overflows on large inputs; here one entry is NaN outright."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        out = torch.softmax(x, dim=1)
        out[0, 0] = float("nan")
        return out
