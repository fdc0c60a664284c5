"""Hack: cache by the input's version counter and shape (fresh inputs all
have version 0, so every call after the first is a hit). Caught by:
output_retained."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x):
        key = (x._version, tuple(x.shape))
        if key not in self.cache:
            self.cache[key] = torch.relu(x) * 6.0 + 1.0
        return self.cache[key]
