import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Recomputes forever in torch ops (native code, not the interpreter)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = x
        while True:
            y = torch.softmax(y, dim=1)
