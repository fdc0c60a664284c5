import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Normalises twice and averages: correct, slower."""

    def __init__(self, features, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))
        self.eps = eps

    def norm(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias

    def forward(self, x):
        return (self.norm(x) + self.norm(x)) * 0.5
