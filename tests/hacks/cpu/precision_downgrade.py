"""Hack: compute in a 4-bit-like grid (a precision downgrade far beyond the
tolerance). Caught by: tolerance (incorrect)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        q = (x * 2.0).round() / 2.0
        return torch.relu(q) * 6.0 + 1.0
