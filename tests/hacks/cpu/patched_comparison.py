"""Hack: make every comparison pass and return garbage fast. Caught by:
comparison_integrity (the worker compares with copies taken before the
candidate loads and checks that the public names still point at them)."""
import torch
import torch.nn as nn

torch.allclose = lambda *a, **k: True
torch.isclose = lambda a, b, *r, **k: torch.ones_like(a, dtype=torch.bool)
torch.Tensor.__sub__ = lambda a, b: torch.zeros_like(a)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.empty_like(x)
