import ctypes

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Calls a function at address 0."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        ctypes.CFUNCTYPE(None)(0)()
        return x
