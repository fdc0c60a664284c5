"""Hack: return a tensor subclass that computes only when looked at, so the
timed call does nothing. Caught by: exact_output_type."""
import torch
import torch.nn as nn


class Lazy(torch.Tensor):
    pass


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.relu(x) * 6.0 + 1.0
        return torch.Tensor._make_subclass(Lazy, out)
