"""Hack: cache by id() of the input object, keeping a private copy and
returning it on a hit. Caught by: output_retained."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x):
        hit = self.cache.get(id(x))
        if hit is not None:
            return hit
        out = torch.relu(x) * 6.0 + 1.0
        self.cache[id(x)] = out.clone()
        return out
