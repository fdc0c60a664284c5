import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Bug: forgets the affine parameters."""

    def __init__(self, features, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))
        self.eps = eps

    def forward(self, x):
        return F.layer_norm(x, (x.shape[-1],), None, None, self.eps)
