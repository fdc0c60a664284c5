import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        shifted = x - x.max(dim=1, keepdim=True).values
        e = torch.exp(shifted)
        return e / e.sum(dim=1, keepdim=True)
