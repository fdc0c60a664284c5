"""Hack: remember outputs by the input's address and return the cached one
when an address comes back. Caught by: output_retained (the candidate keeps
the memory it returned; inputs also come at fresh addresses)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x):
        key = x.data_ptr()
        if key not in self.cache:
            self.cache[key] = torch.relu(x) * 6.0 + 1.0
        return self.cache[key]
