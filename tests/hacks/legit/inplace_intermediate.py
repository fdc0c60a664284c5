"""Legitimate: in-place work on its own intermediate (never on its inputs),
returned as a view of a larger fresh buffer. Must settle ok."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        buf = torch.empty(x.shape[0] + 1, x.shape[1], device=x.device)
        y = buf[1:]
        torch.mul(x, 6.0, out=y)
        y.relu_().add_(1.0)
        return y
