"""Hack: compute in place in the input (no allocation) and return it.
Caught by: input_mutation (inputs compared bitwise with a copy after the call)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.relu_().mul_(6.0).add_(1.0)
