import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Normalises twice (the second pass changes nothing): correct, slower."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        shifted = x - x.max(dim=1, keepdim=True).values
        e = torch.exp(shifted)
        p = e / e.sum(dim=1, keepdim=True)
        shifted = p.log() - p.log().max(dim=1, keepdim=True).values
        e = torch.exp(shifted)
        return e / e.sum(dim=1, keepdim=True)
