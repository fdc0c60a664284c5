import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """In float64 with an extra normalisation pass: correct, slower."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.double()
        e = torch.exp(x - x.max(dim=1, keepdim=True).values)
        p = e / e.sum(dim=1, keepdim=True)
        p = p / p.sum(dim=1, keepdim=True)
        return p.float()
