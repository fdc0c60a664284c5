import sys

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Recurses until the C stack overflows."""

    def __init__(self, features, eps):
        super().__init__()

    def forward(self, x):
        sys.setrecursionlimit(10**9)

        def down(n):
            return down(n + 1) + 1

        return down(0)
