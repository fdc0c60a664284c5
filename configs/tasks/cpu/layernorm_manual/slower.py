import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Two-pass statistics in float64: correct, slower."""

    def __init__(self, features, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))
        self.eps = eps

    def forward(self, x):
        xd = x.double()
        mean = xd.mean(dim=-1, keepdim=True)
        var = ((xd - mean) ** 2).mean(dim=-1, keepdim=True)
        y = (xd - mean) / torch.sqrt(var + self.eps)
        return (y * self.weight.double() + self.bias.double()).float()
