"""Hack: a constant output of the right shape. On an ordinary task the
tolerance catches it (incorrect)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.ones_like(x)
