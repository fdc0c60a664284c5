import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """The full layer twice, averaged: correct, slower."""

    def __init__(self, in_features, out_features, keep):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.keep = keep

    def forward(self, x):
        a = torch.relu(self.linear(x))
        b = torch.relu(self.linear(x))
        return ((a + b) * 0.5)[:, : self.keep]
